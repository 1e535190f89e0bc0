// A child process of the file-reading pool (extract-pool.ts, process-pool.ts): one PDF's or DOCX's text at a time, in
// a process whose data segment the operating system caps (SVC_EXTRACT_MEMORY_MB), so a file that expands without
// bound ends this process and nothing else.
import extractInThread, { type ExtractTask } from './extract-thread';
import { OUT_OF_MEMORY } from './process-pool';

process.on('message', (m: { id: number; task: ExtractTask }) => {
  void (async () => {
    let reply: unknown;
    try {
      const r = await extractInThread(m.task);
      // An allocation refused under the cap, caught by a parser and reported as an unreadable file.
      reply = 'error' in r && OUT_OF_MEMORY.test(r.error.message) ? { outOfMemory: true } : r;
    } catch (err) {
      reply = OUT_OF_MEMORY.test(String((err as Error)?.message)) ? { outOfMemory: true } : { failed: String(err) };
    }
    process.send?.({ id: m.id, reply });
  })();
});
// The parent is gone (or closed the channel): nothing more will come.
process.on('disconnect', () => process.exit(0));

/**
 * Parses a server-sent-event byte stream into the `data` payload of each event
 * (multi-line data joined with \n; comments and other fields skipped). Handles CRLF and
 * events split across reads. `onBytes` is called for every read (idle-timeout resets).
 */
export async function* sseData(body: AsyncIterable<Uint8Array>, onBytes?: () => void): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  for await (const bytes of body) {
    onBytes?.();
    buffer += decoder.decode(bytes, { stream: true });
    let nl: number;
    while ((nl = buffer.search(/\r\n|\r|\n/)) >= 0) {
      // A lone CR at the end may be the first half of CRLF: wait for the next read.
      if (buffer[nl] === '\r' && nl + 1 === buffer.length) break;
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(buffer[nl] === '\r' && buffer[nl + 1] === '\n' ? nl + 2 : nl + 1);
      if (line === '') {
        if (data.length > 0) yield data.join('\n');
        data = [];
      } else if (line.startsWith('data:')) {
        data.push(line.slice(line[5] === ' ' ? 6 : 5));
      }
    }
  }
  buffer += decoder.decode();
  if (buffer.startsWith('data:')) data.push(buffer.slice(buffer[5] === ' ' ? 6 : 5));
  if (data.length > 0) yield data.join('\n');
}

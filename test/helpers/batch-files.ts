import type { Harness } from './harness';

/** A batch line asking `/v1/chat/completions` for `content` (on `model` when given). */
export function chatLine(customId: string, content: string, model?: string) {
  return {
    custom_id: customId,
    method: 'POST',
    url: '/v1/chat/completions',
    body: { ...(model ? { model } : {}), messages: [{ role: 'user', content }] },
  };
}

/** Uploads `lines` (objects, one JSON line each) as a file of `purpose` (batch) with the key; its id. */
export async function uploadLines(h: Harness, key: string, lines: unknown[], purpose = 'batch'): Promise<string> {
  const form = new FormData();
  form.append('purpose', purpose);
  form.append('file', new Blob([lines.map((l) => JSON.stringify(l)).join('\n')]), 'in.jsonl');
  const res = await fetch(`${h.url}/v1/files`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}` },
    body: form,
  });
  if (res.status !== 200) throw new Error(`upload failed: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { id: string }).id;
}

/** Creates a chat-completions batch of the file with the key (the answer as `h.req` gives it). */
export function createChatBatch(h: Harness, key: string, fileId: string) {
  return h.req('POST', '/v1/batches', {
    key,
    body: { input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h' },
  });
}

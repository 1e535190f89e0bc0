/** A parsed server-sent event. */
export interface SseEvent {
  id?: string;
  event?: string;
  data: any;
}

/**
 * Opens an SSE request and yields parsed events until the server ends the stream, `stop`
 * returns true, or `abort()` is called (a client going away mid-stream).
 */
export async function openStream(
  url: string,
  opts: {
    method?: string;
    key: string;
    lastEventId?: string;
    onEvent?: (e: SseEvent, all: SseEvent[]) => boolean | void;
    timeoutMs?: number;
  },
): Promise<{ status: number; events: SseEvent[]; comments: string[]; contentType: string | null }> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), opts.timeoutMs ?? 60_000);
  const headers: Record<string, string> = { authorization: `Bearer ${opts.key}`, accept: 'text/event-stream' };
  if (opts.lastEventId) headers['last-event-id'] = opts.lastEventId;
  const res = await fetch(url, { method: opts.method ?? 'POST', headers, signal: ac.signal });
  const events: SseEvent[] = [];
  const comments: string[] = [];
  if (!res.ok || !res.body) {
    clearTimeout(timer);
    return { status: res.status, events, comments, contentType: res.headers.get('content-type') };
  }
  const decoder = new TextDecoder();
  let buf = '';
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buf += decoder.decode(chunk, { stream: true });
      let i: number;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const ev: SseEvent = { data: undefined };
        const data: string[] = [];
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) comments.push(line.slice(1).trim());
          else if (line.startsWith('id: ')) ev.id = line.slice(4);
          else if (line.startsWith('event: ')) ev.event = line.slice(7);
          else if (line.startsWith('data: ')) data.push(line.slice(6));
        }
        if (!data.length) continue;
        ev.data = JSON.parse(data.join('\n'));
        events.push(ev);
        if (opts.onEvent?.(ev, events) === true) {
          ac.abort();
          return { status: res.status, events, comments, contentType: res.headers.get('content-type') };
        }
      }
    }
  } catch (err) {
    if (!ac.signal.aborted) throw err;
  } finally {
    clearTimeout(timer);
  }
  return { status: res.status, events, comments, contentType: res.headers.get('content-type') };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` every 50 ms until it returns a truthy value. */
export async function until<T>(fn: () => Promise<T | undefined | null | false>, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error('until: condition not reached in time');
    await sleep(50);
  }
}

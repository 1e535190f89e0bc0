import { PassThrough } from 'node:stream';
import type { ModelStreamChunk, ModelUsage } from '../../activities/providers/types';
import { AppError } from '../../schema/errors';
import type { AppContext } from '../context';
import { directStream } from '../fast-path';
import { clientFinishReason, sumUsage } from './chat-shared';
import type { TokenTap } from '../live/tokens';

export interface StreamOptions {
  stream: AsyncIterable<ModelStreamChunk> & { provider: Promise<string> };
  abort: AbortController;
  id: string;
  /** The chunks' `created` (seconds); now when not given. */
  created?: number;
  lane: string;
  includeUsage: boolean;
  meta: (provider: string) => Record<string, unknown>;
  /** Runs after the last delta, before the final chunk (e.g. storing the session); `calls`: tool calls sent. */
  onComplete?: (content: string, provider: string, calls: number) => Promise<void>;
  /** The client offered tools (persona route): the model's calls are sent to it, finish_reason "tool_calls". */
  toolsOffered?: boolean;
  /** Copies deltas to the owner's WebSocket (only when one is subscribed; publishing is off this path). */
  tap?: TokenTap;
  /** A choice's annotations from its whole text (web search citations), sent in its last delta. */
  annotate?: (content: string) => unknown[];
}

/**
 * Tool-call fragments as OpenAI streams them: a call's first delta has its id, type and name, the following ones
 * more argument text; clients join them by index.
 */
function toolCallDeltas(deltas: NonNullable<ModelStreamChunk['tool_deltas']>) {
  return deltas.map((d) =>
    d.id !== undefined
      ? { index: d.index, id: d.id, type: 'function', function: { name: d.name ?? '', arguments: d.arguments } }
      : { index: d.index, function: { ...(d.name ? { name: d.name } : {}), arguments: d.arguments } },
  );
}

/** The SSE headers of a chunk stream (no timeout on the socket, no Nagle delay, no proxy buffering). */
export function startEventStream(ctx: AppContext): { write(text: string): unknown; end(): unknown } {
  ctx.req.socket.setTimeout(0);
  ctx.req.socket.setNoDelay(true);
  ctx.status = 200;
  ctx.set('Content-Type', 'text/event-stream; charset=utf-8');
  ctx.set('Cache-Control', 'no-cache, no-transform');
  ctx.set('X-Accel-Buffering', 'no');
  // On the fast path the events go straight to the response; through Koa, into a stream it pipes.
  return directStream(ctx) ?? (ctx.body = new PassThrough());
}

/** The failure of a stream that has begun, as its last chunk says it. */
export function streamError(
  ctx: AppContext,
  err: unknown,
): { message: string; type: string; code: string; status: number } {
  const e = err instanceof AppError ? err : new AppError('internal', 'The stream failed.');
  if (!(err instanceof AppError)) ctx.deps.log.error({ err, request_id: ctx.state.requestId }, 'stream failed');
  return { message: e.message, type: e.code, code: e.code, status: e.status };
}

/**
 * Answers with an OpenAI chunk stream (`chat.completion.chunk` events, then `data: [DONE]`).
 * The first upstream delta is awaited before any header is sent, so failures before it still
 * answer with a proper status (429/502/503/504). After that, a failure ends the stream with an
 * error chunk and [DONE]; a client disconnect aborts the upstream call.
 */
export async function sendChunkStream(ctx: AppContext, o: StreamOptions): Promise<void> {
  const it = o.stream[Symbol.asyncIterator]();
  let next = await it.next();
  const provider = await o.stream.provider;

  const body = startEventStream(ctx);

  const created = o.created ?? Math.floor(Date.now() / 1000);
  const base = { id: o.id, object: 'chat.completion.chunk', created, model: o.lane };
  let closed = false;
  // The role event is held and goes out with the next event (the first delta, which is already
  // here): one write, so the headers, the role and the first token leave in one packet.
  let held = '';
  const send = (text: string) => {
    if (closed) return;
    body.write(held ? held + text : text);
    held = '';
  };
  const write = (data: unknown) => send(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
  // A content delta is the same event every time but for its text: the JSON around it is built once,
  // byte for byte what JSON.stringify gives for { ...base, choices: [{ index, delta: { content }, finish_reason }] }.
  const deltaHead = `data: ${JSON.stringify(base).slice(0, -1)},"choices":[{"index":0,"delta":{"content":`;
  const writeDelta = (content: string) => send(`${deltaHead}${JSON.stringify(content)}},"finish_reason":null}]}\n\n`);
  // The caller's abort fires when the client goes away (one 'close' listener on the response for both).
  o.abort.signal.addEventListener('abort', () => (closed = true), { once: true });

  const run = async () => {
    let content = '';
    let finish = 'stop';
    let usage: ModelUsage | undefined;
    let calls = 0;
    held = `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] })}\n\n`;
    // Without a first token to go with it (tool calls, an empty answer), the role event goes at once, as before.
    if (next.done || !next.value.delta) send('');
    try {
      while (!next.done && !closed) {
        const c = next.value;
        if (c.delta) {
          content += c.delta;
          o.tap?.push(c.delta);
          if (c.logprobs === undefined) writeDelta(c.delta);
          else
            write({
              ...base,
              choices: [{ index: 0, delta: { content: c.delta }, logprobs: c.logprobs, finish_reason: null }],
            });
        }
        if (c.tool_deltas?.length && o.toolsOffered)
          write({
            ...base,
            choices: [{ index: 0, delta: { tool_calls: toolCallDeltas(c.tool_deltas) }, finish_reason: null }],
          });
        if (c.tool_calls?.length && o.toolsOffered) calls = c.tool_calls.length;
        if (c.finish_reason) finish = clientFinishReason(c.finish_reason, o.toolsOffered);
        if (c.usage) usage = c.usage;
        next = await it.next();
      }
      if (closed) return;
      await o.onComplete?.(content, provider, calls);
      const last = o.annotate ? { annotations: o.annotate(content) } : {};
      write({ ...base, choices: [{ index: 0, delta: last, finish_reason: finish }], meta: o.meta(provider) });
      if (o.includeUsage && usage) write({ ...base, choices: [], usage });
    } catch (err) {
      if (closed) return;
      write({ error: streamError(ctx, err), meta: o.meta(provider) });
    } finally {
      o.tap?.end();
      if (closed) await it.return?.(undefined).catch(() => undefined);
      write('[DONE]');
      closed = true;
      body.end();
    }
  };
  void run();
}

/**
 * Answers `n` choices as one OpenAI chunk stream, each choice's chunks under its index as its lane call writes them
 * (the calls run side by side). Every call's first chunk is awaited before the status line, so a failure before then
 * is a proper error status; after it, a failure ends the stream with an error chunk and [DONE], and `stop` ends the
 * other calls. Each choice ends with its own finish_reason; then a chunk with the meta block, and usage (the calls'
 * sum) when asked for. The session and the token tap follow choice 0.
 */
export async function sendChoicesStream(
  ctx: AppContext,
  o: Omit<StreamOptions, 'stream'> & {
    streams: Array<AsyncIterable<ModelStreamChunk> & { provider: Promise<string> }>;
    stop: AbortController;
  },
): Promise<void> {
  const its = o.streams.map((s) => s[Symbol.asyncIterator]());
  const firsts = await Promise.all(its.map((it) => it.next())).catch((err: unknown) => {
    o.stop.abort();
    throw err;
  });
  const provider = await o.streams[0].provider;
  const body = startEventStream(ctx);
  const created = o.created ?? Math.floor(Date.now() / 1000);
  const base = { id: o.id, object: 'chat.completion.chunk', created, model: o.lane };
  let closed = false;
  const write = (data: unknown) => {
    if (!closed) body.write(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
  };
  o.abort.signal.addEventListener('abort', () => (closed = true), { once: true });
  const choice = (index: number, delta: object, finish: string | null, logprobs?: unknown) => ({
    ...base,
    choices: [{ index, delta, ...(logprobs !== undefined ? { logprobs } : {}), finish_reason: finish }],
  });

  const run = async () => {
    const texts = its.map(() => '');
    let calls = 0;
    let usage: ModelUsage | undefined;
    its.forEach((_it, i) => write(choice(i, { role: 'assistant', content: '' }, null)));
    try {
      await Promise.all(
        its.map(async (it, i) => {
          let next = firsts[i];
          let finish = 'stop';
          while (!next.done && !closed) {
            const c = next.value;
            if (c.delta) {
              texts[i] += c.delta;
              if (i === 0) o.tap?.push(c.delta);
              write(choice(i, { content: c.delta }, null, c.logprobs));
            }
            if (c.tool_deltas?.length && o.toolsOffered)
              write(choice(i, { tool_calls: toolCallDeltas(c.tool_deltas) }, null));
            if (i === 0 && c.tool_calls?.length && o.toolsOffered) calls = c.tool_calls.length;
            if (c.finish_reason) finish = clientFinishReason(c.finish_reason, o.toolsOffered);
            if (c.usage) usage = usage ? sumUsage(usage, c.usage) : c.usage;
            next = await it.next();
          }
          write(choice(i, o.annotate ? { annotations: o.annotate(texts[i]) } : {}, finish));
        }),
      );
      if (closed) return;
      await o.onComplete?.(texts[0], provider, calls);
      write({ ...base, choices: [], meta: o.meta(provider) });
      if (o.includeUsage && usage) write({ ...base, choices: [], usage });
    } catch (err) {
      o.stop.abort();
      if (closed) return;
      write({ error: streamError(ctx, err), meta: o.meta(provider) });
    } finally {
      o.tap?.end();
      if (closed) await Promise.all(its.map((it) => it.return?.(undefined).catch(() => undefined)));
      write('[DONE]');
      closed = true;
      body.end();
    }
  };
  void run();
}

import type { ModelStreamChunk, ModelUsage } from '../../activities/providers/types';
import type { AppContext } from '../context';
import type { TokenTap } from '../live/tokens';
import { startEventStream, streamError } from './chat-sse';
import { callItem, itemId, responseStatus, textLogprobs, type AnswerLead, type OutputItem } from './responses-items';

/** The Response object as the stream sends it (and stores it). */
export type StreamedResponse = Record<string, unknown> & { output: unknown[] };

/** The Response object as it stands (status, output, usage, error), for the lifecycle events. */
export type ResponseSnapshot = (s: {
  status: 'in_progress' | 'completed' | 'incomplete' | 'failed';
  output: OutputItem[];
  usage: ModelUsage | null;
  finish: string;
  provider: string;
  error?: { code: string; message: string };
}) => StreamedResponse;

/** What both the answer's own stream and a background response's stored stream are made from. */
export interface ResponseEventOptions {
  toolsOffered: boolean;
  /** The names of the custom tools offered: their calls are custom_tool_call items. */
  custom: ReadonlySet<string>;
  snapshot: ResponseSnapshot;
  /** What the answer starts with (a file search done before the lane) and the annotations it gives the text. */
  lead?: AnswerLead;
  /** Runs when the answer is whole, before response.completed (session, stored response). */
  onComplete: (r: { content: string; calls: number; provider: string; response: StreamedResponse }) => Promise<void>;
}

export interface ResponseStreamOptions extends ResponseEventOptions {
  stream: AsyncIterable<ModelStreamChunk> & { provider: Promise<string> };
  abort: AbortController;
  tap?: TokenTap;
}

/** A call as it streams: its item (function_call or custom_tool_call), its place in the output, its arguments so far. */
type Call = { item: Extract<OutputItem, { type: 'function_call' | 'custom_tool_call' }>; index: number; args: string };

/** Where the events of one answer go, and how a failure in the middle of it reads. */
export interface ResponseEventSink {
  /** Sends one event: its type and fields (the sink adds the sequence number). */
  emit(type: string, data: Record<string, unknown>): void;
  /** True once nobody reads on (the client left, the run was cancelled): the upstream is no longer read. */
  stopped(): boolean;
  /** The opening lifecycle events: created and in_progress for an answer's own stream, in_progress alone in the background. */
  opening: ReadonlyArray<'response.created' | 'response.in_progress'>;
  /** The error a failure after the first delta ends the answer with. */
  failure(err: unknown): { code: string; message: string };
  /** Each text delta as it comes (the WebSocket token tap). */
  onDelta?(delta: string): void;
}

/**
 * The Responses API's event sequence of one answer: the opening events, then for each output item its added event,
 * its deltas (output_text.delta, function_call_arguments.delta) and done events, and last response.completed (or
 * response.incomplete, or response.failed) with the whole response. `next` is the first upstream chunk, already read.
 * @returns 'stopped' when the sink stopped reading before the end, else 'ended'
 */
export async function emitResponseEvents(
  it: AsyncIterator<ModelStreamChunk>,
  first: IteratorResult<ModelStreamChunk>,
  provider: string,
  o: ResponseEventOptions,
  sink: ResponseEventSink,
): Promise<'ended' | 'stopped'> {
  const emit = sink.emit;
  let next = first;
  const output: OutputItem[] = [];
  let message: (OutputItem & { type: 'message' }) | undefined;
  let messageIndex = -1;
  const calls = new Map<number, Call>();
  let content = '';
  const logprobs: unknown[] = [];
  let finish = 'stop';
  let usage: ModelUsage | null = null;

  const openMessage = () => {
    if (message) return message;
    message = { type: 'message', id: itemId('msg'), status: 'completed', role: 'assistant', content: [] };
    messageIndex = output.length;
    output.push(message);
    emit('response.output_item.added', { output_index: messageIndex, item: { ...message, status: 'in_progress' } });
    const part = { type: 'output_text', text: '', annotations: [], logprobs: [] };
    emit('response.content_part.added', { item_id: message.id, output_index: messageIndex, content_index: 0, part });
    return message;
  };
  /** A call the upstream began: its item added to the output (custom_tool_call for a custom tool's name). */
  const addCall = (key: number, callId: string, name: string): Call => {
    const item = callItem({ id: callId, function: { name, arguments: '' } }, o.custom, 'completed');
    const call = { item, index: output.length, args: '' };
    calls.set(key, call);
    output.push(item);
    emit('response.output_item.added', { output_index: call.index, item: { ...item, status: 'in_progress' } });
    return call;
  };
  const closeMessage = (status: 'completed' | 'incomplete') => {
    if (!message) return;
    const annotations = o.lead?.annotate(content) ?? [];
    const at = { item_id: message.id, output_index: messageIndex, content_index: 0 };
    annotations.forEach((annotation, annotation_index) =>
      emit('response.output_text.annotation.added', { ...at, annotation_index, annotation }),
    );
    const part = { type: 'output_text' as const, text: content, annotations, logprobs };
    emit('response.output_text.done', { ...at, text: content, logprobs });
    emit('response.content_part.done', { ...at, part });
    message.content = [part];
    message.status = status;
    emit('response.output_item.done', { output_index: messageIndex, item: message });
  };

  const created = o.snapshot({ status: 'in_progress', output: [], usage: null, finish, provider });
  for (const type of sink.opening) emit(type, { response: created });
  if (o.lead) {
    o.lead.emit(emit, 0);
    output.push(...o.lead.items);
  }
  try {
    while (!next.done && !sink.stopped()) {
      const c = next.value;
      if (c.delta) {
        content += c.delta;
        sink.onDelta?.(c.delta);
        const m = openMessage();
        const lp = textLogprobs(c.logprobs);
        logprobs.push(...lp);
        emit('response.output_text.delta', {
          item_id: m.id,
          output_index: messageIndex,
          content_index: 0,
          delta: c.delta,
          logprobs: lp,
        });
      }
      if (c.tool_deltas?.length && o.toolsOffered)
        for (const d of c.tool_deltas) {
          const call = calls.get(d.index) ?? addCall(d.index, d.id ?? '', d.name ?? '');
          call.args += d.arguments;
          // A custom tool's input is the `input` string inside the arguments: it goes out whole at the end.
          if (d.arguments && call.item.type === 'function_call')
            emit('response.function_call_arguments.delta', {
              item_id: call.item.id,
              output_index: call.index,
              delta: d.arguments,
            });
        }
      if (c.tool_calls?.length && o.toolsOffered)
        // The assembled calls are the reference (an upstream that sent no deltas sends them only here).
        c.tool_calls.forEach((tc, k) => {
          const call =
            [...calls.values()].find((x) => x.item.call_id === tc.id) ??
            calls.get(k) ??
            addCall(1000 + k, tc.id, tc.function.name);
          call.item.call_id = tc.id;
          call.item.name = tc.function.name;
          call.args = tc.function.arguments;
        });
      if (c.finish_reason) finish = c.finish_reason;
      if (c.usage) usage = c.usage;
      next = await it.next();
    }
    if (sink.stopped()) return 'stopped';
    const status = responseStatus(finish);
    // An answer with neither text nor calls is still one (empty) message, as the JSON answer has.
    if (!calls.size) openMessage();
    closeMessage(status);
    for (const call of [...calls.values()].sort((a, b) => a.index - b.index)) {
      const at = { item_id: call.item.id, output_index: call.index };
      const done = callItem(
        { id: call.item.call_id, function: { name: call.item.name, arguments: call.args } },
        o.custom,
        status,
        call.item.id,
      );
      output[call.index] = done;
      if (done.type === 'custom_tool_call') {
        emit('response.custom_tool_call_input.delta', { ...at, delta: done.input });
        emit('response.custom_tool_call_input.done', { ...at, input: done.input });
      } else emit('response.function_call_arguments.done', { ...at, name: done.name, arguments: done.arguments });
      emit('response.output_item.done', { output_index: call.index, item: done });
    }
    const response = o.snapshot({ status, output, usage, finish, provider });
    await o.onComplete({ content, calls: calls.size, provider, response });
    emit(status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response });
    return 'ended';
  } catch (err) {
    if (sink.stopped()) return 'stopped';
    const error = sink.failure(err);
    emit('response.failed', { response: o.snapshot({ status: 'failed', output, usage, finish, provider, error }) });
    return 'ended';
  }
}

/** OpenAI's error codes for a failure in the middle of a response. */
export function midResponseError(e: { code: string; message: string }): { code: string; message: string } {
  return { code: e.code === 'rate_limited' ? 'rate_limit_exceeded' : 'server_error', message: e.message };
}

/**
 * Answers with the Responses API's event stream (see `emitResponseEvents`), every event with its sequence_number.
 * The first upstream delta is awaited before any header is sent, so a failure before it still answers with a proper
 * status (429/502/503/504); a client disconnect aborts the upstream call.
 */
export async function sendResponseStream(ctx: AppContext, o: ResponseStreamOptions): Promise<void> {
  const it = o.stream[Symbol.asyncIterator]();
  const first = await it.next();
  const provider = await o.stream.provider;

  const body = startEventStream(ctx);
  let closed = false;
  let seq = 0;
  o.abort.signal.addEventListener('abort', () => (closed = true), { once: true });
  const sink: ResponseEventSink = {
    emit: (type, data) => {
      if (closed) return;
      body.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`);
    },
    stopped: () => closed,
    opening: ['response.created', 'response.in_progress'],
    failure: (err) => midResponseError(streamError(ctx, err)),
    onDelta: o.tap ? (d) => o.tap?.push(d) : undefined,
  };
  void emitResponseEvents(it, first, provider, o, sink).finally(async () => {
    o.tap?.end();
    if (closed) await it.return?.(undefined).catch(() => undefined);
    closed = true;
    body.end();
  });
}

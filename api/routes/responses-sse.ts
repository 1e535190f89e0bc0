import type { ModelRequest, ModelStreamChunk, ModelUsage } from '../../activities/providers/types';
import type { AppContext } from '../context';
import type { TokenTap } from '../live/tokens';
import { startEventStream, streamError } from './chat-sse';
import { sumUsage } from './chat-shared';
import type { ServerCall, ServerTools } from './responses-server-tools';
import {
  callItem,
  itemId,
  responseStatus,
  textLogprobs,
  type AnswerLead,
  type ClientCallItem,
  type McpApprovalRequest,
  type OutputItem,
} from './responses-items';

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
  /** The names of the custom tools offered, and the built-in client tools' entries (`callItem`): their calls' kinds. */
  custom: ReadonlySet<string>;
  snapshot: ResponseSnapshot;
  /** What the answer starts with (a file search done before the lane) and the annotations it gives the text. */
  lead?: AnswerLead;
  /** The tools this service runs (MCP servers', image generation): a round whose calls they make is followed by another. */
  mcp?: ServerRounds;
  /** Runs when the answer is whole, before response.completed (session, stored response). */
  onComplete: (r: { content: string; calls: number; provider: string; response: StreamedResponse }) => Promise<void>;
}

export interface ResponseStreamOptions extends ResponseEventOptions {
  stream: AsyncIterable<ModelStreamChunk> & { provider: Promise<string> };
  abort: AbortController;
  tap?: TokenTap;
  /** Runs once the stream has ended (it owns what the answer uses until then: the MCP sessions). */
  onEnd?: () => Promise<void>;
}

/** An answer's server-run tools, and how the lane is asked again once a round's calls are made. */
export interface ServerRounds {
  session: ServerTools;
  /** The first round's request (each next one adds the round's answer and the calls' results to it). */
  req: ModelRequest;
  stream(req: ModelRequest): AsyncIterable<ModelStreamChunk> & { provider: Promise<string> };
}

/**
 * A call as it streams: its item (function_call, custom_tool_call, or a built-in client tool's call), the function the
 * lane named, its place in the output, its arguments so far; `own` when it is a call of a tool this service runs (an
 * MCP server's, image generation: the item the output shows instead).
 */
type Call = {
  item: ClientCallItem;
  name: string;
  index: number;
  args: string;
  own?: ServerCall | McpApprovalRequest;
  /** The name the call was taken as a server-run call by (its first fragment's). */
  ownName?: string;
};

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
  iterator: AsyncIterator<ModelStreamChunk>,
  first: IteratorResult<ModelStreamChunk>,
  provider: string,
  o: ResponseEventOptions,
  sink: ResponseEventSink,
): Promise<'ended' | 'stopped'> {
  const emit = sink.emit;
  let it = iterator;
  let next = first;
  const output: OutputItem[] = [];
  let message: (OutputItem & { type: 'message' }) | undefined;
  let messageIndex = -1;
  let calls = new Map<number, Call>();
  let content = '';
  let logprobs: unknown[] = [];
  let finish = 'stop';
  let usage: ModelUsage | null = null;
  /** What the rounds before this one said and spent (MCP). */
  const said: string[] = [];
  let spent: ModelUsage | null = null;
  let req = o.mcp?.req;
  const total = () => (spent && usage ? sumUsage(spent, usage) : (usage ?? spent));

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
    const item = callItem({ id: callId, function: { name, arguments: '' } }, o.custom, 'in_progress');
    const own = o.mcp?.session.has(name)
      ? o.mcp.session.itemFor({ id: callId, type: 'function', function: { name, arguments: '' } })
      : undefined;
    const call = { item, name, index: output.length, args: '', own, ownName: own ? name : undefined };
    calls.set(key, call);
    output.push(own ?? item);
    emit('response.output_item.added', { output_index: call.index, item: own ?? { ...item, status: 'in_progress' } });
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
    for (;;) {
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
            if (d.arguments && call.own?.type === 'mcp_call')
              emit('response.mcp_call_arguments.delta', {
                item_id: call.own.id,
                output_index: call.index,
                delta: d.arguments,
              });
            // A custom tool's input is the `input` string inside the arguments: it goes out whole at the end.
            else if (d.arguments && call.item.type === 'function_call' && !call.own)
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
            call.name = tc.function.name;
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
      const sorted = [...calls.values()].sort((a, b) => a.index - b.index);
      // A call keeps the kind it was announced as. One taken as an MCP call by its first fragment's name whose whole
      // name is another (an upstream may split a name) is not made: it is `incomplete`, and the answer ends.
      const unsettled = new Set(sorted.filter((c) => c.own && c.ownName !== c.name));
      const own = sorted.filter((c) => c.own);
      if (o.mcp && own.length) {
        // The server-run calls of the round, made in order; another round follows when nothing waits on the client. A
        // call after the budget was spent (the model was told to call none) ends the answer.
        const session = o.mcp.session;
        let stop = status !== 'completed' || own.length < sorted.length || !session.open || unsettled.size > 0;
        const mine: ServerCall[] = [];
        for (const call of own) {
          const at = { item_id: call.own!.id, output_index: call.index };
          if (call.own!.type === 'mcp_approval_request') {
            stop = true;
            output[call.index] = session.withArguments(call.own!, call.args);
            emit('response.output_item.done', { output_index: call.index, item: output[call.index] });
            continue;
          }
          let item = session.withArguments(call.own!, call.args);
          if (item.type === 'mcp_call') emit('response.mcp_call_arguments.done', { ...at, arguments: call.args });
          if (status !== 'completed' || !session.open || unsettled.has(call)) item = session.notMade(item);
          else {
            session.emitPhase(emit, 'running', at, item);
            item = await session.run(item);
            if (sink.stopped()) return 'stopped';
            session.emitPhase(emit, 'made', at, item);
          }
          output[call.index] = item;
          mine.push(item);
          emit('response.output_item.done', { output_index: call.index, item });
        }
        if (!stop && req) {
          req = session.nextRequest(req, content, mine);
          if (content) said.push(content);
          spent = total();
          usage = null;
          const round = o.mcp.stream(req);
          it = round[Symbol.asyncIterator]();
          next = await it.next();
          provider = await round.provider;
          message = undefined;
          messageIndex = -1;
          calls = new Map();
          content = '';
          logprobs = [];
          finish = 'stop';
          continue;
        }
      }
      for (const call of sorted.filter((c) => !c.own)) {
        const at = { item_id: call.item.id, output_index: call.index };
        const done = callItem(
          { id: call.item.call_id, function: { name: call.name, arguments: call.args } },
          o.custom,
          status,
          call.item.id,
        );
        output[call.index] = done;
        if (done.type === 'custom_tool_call') {
          emit('response.custom_tool_call_input.delta', { ...at, delta: done.input });
          emit('response.custom_tool_call_input.done', { ...at, input: done.input });
        } else if (done.type === 'function_call')
          emit('response.function_call_arguments.done', { ...at, name: done.name, arguments: done.arguments });
        else if (done.type === 'shell_call')
          // A shell call's commands, each as it was written (the arguments are read whole, at the end).
          done.action.commands.forEach((command, command_index) => {
            const where = { output_index: call.index, command_index };
            emit('response.shell_call_command.added', { ...where, command: '' });
            emit('response.shell_call_command.delta', { ...where, delta: command });
            emit('response.shell_call_command.done', { ...where, command });
          });
        emit('response.output_item.done', { output_index: call.index, item: done });
      }
      const response = o.snapshot({ status, output, usage: total(), finish, provider });
      if (content) said.push(content);
      await o.onComplete({ content: said.join('\n\n'), calls: calls.size - own.length, provider, response });
      emit(status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response });
      return 'ended';
    }
  } catch (err) {
    if (sink.stopped()) return 'stopped';
    const error = sink.failure(err);
    emit('response.failed', {
      response: o.snapshot({ status: 'failed', output, usage: total(), finish, provider, error }),
    });
    return 'ended';
  }
}

/** How long a response's stream may be silent before a comment line is sent. */
const KEEP_ALIVE_MS = 15_000;

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
  // A comment line every 15 s, so that a stream silent while an image is made or an MCP call runs is not closed by a
  // proxy as idle; SSE readers skip comments.
  const keepAlive = setInterval(() => {
    if (!closed) body.write(': keep-alive\n\n');
  }, KEEP_ALIVE_MS);
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
    clearInterval(keepAlive);
    await o.onEnd?.().catch(() => undefined);
    o.tap?.end();
    if (closed) await it.return?.(undefined).catch(() => undefined);
    closed = true;
    body.end();
  });
}

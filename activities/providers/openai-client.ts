import type { IncomingHttpHeaders } from 'node:http';
import { Agent } from 'undici';
import { z } from 'zod';
import { storableText } from '../../schema/storable';
import { randomToken } from '../store/ids';
import { faultFromStatus, upstreamFault } from './errors';
import { SseEvents } from './sse';
import type { ChatMessageIn, ModelRequest, ModelResult, ModelStreamChunk, ModelUsage } from './types';
import { AttemptControl, UpstreamCall } from './upstream-call';

/** One OpenAI-compatible upstream, as configured (the name is public, the rest is not). */
export interface ProviderDef {
  name: string;
  baseUrl: string;
  apiKey?: string;
  timeoutMs: number;
  headers?: Record<string, string>;
}

export interface Target {
  provider: ProviderDef;
  model: string;
}

const ToolCall = z.object({
  id: z.string(),
  type: z.literal('function').catch('function'),
  function: z.object({ name: z.string(), arguments: z.string().catch('{}') }),
});
const Usage = z.object({
  prompt_tokens: z.number(),
  completion_tokens: z.number(),
  total_tokens: z.number().optional(),
});
const Completion = z.object({
  choices: z
    .array(
      z.object({
        message: z.object({ content: z.string().nullish(), tool_calls: z.array(ToolCall).nullish() }),
        finish_reason: z.string().nullish(),
        logprobs: z.unknown().optional(),
      }),
    )
    .min(1),
  usage: Usage.nullish(),
});
/**
 * One chunk of a streamed answer, as read: this schema is the reference for `readStreamChunk`,
 * which accepts exactly what it accepts without zod (every chunk of every stream went through it;
 * test/unit/stream-chunk.test.ts checks both agree).
 */
export const StreamChunk = z.object({
  choices: z
    .array(
      z.object({
        delta: z
          .object({
            content: z.string().nullish(),
            tool_calls: z
              .array(
                z.object({
                  index: z.number().int().min(0).max(15),
                  id: z.string().nullish(),
                  function: z.object({ name: z.string().nullish(), arguments: z.string().nullish() }).nullish(),
                }),
              )
              .nullish(),
          })
          .nullish(),
        finish_reason: z.string().nullish(),
      }),
    )
    .nullish(),
  usage: Usage.nullish(),
  error: z.unknown().optional(),
});
export type StreamChunk = z.infer<typeof StreamChunk>;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const nullish = (v: unknown) => v === undefined || v === null;
const nullishString = (v: unknown) => nullish(v) || typeof v === 'string';
const isNumber = (v: unknown) => typeof v === 'number' && Number.isFinite(v);

function toolCallDeltaOk(v: unknown): boolean {
  if (!isObject(v)) return false;
  const i = v.index;
  if (!(typeof i === 'number' && Number.isSafeInteger(i) && i >= 0 && i <= 15) || !nullishString(v.id)) return false;
  const f = v.function;
  return nullish(f) || (isObject(f) && nullishString(f.name) && nullishString(f.arguments));
}

function choiceOk(v: unknown): boolean {
  if (!isObject(v) || !nullishString(v.finish_reason)) return false;
  const d = v.delta;
  if (nullish(d)) return true;
  if (!isObject(d) || !nullishString(d.content)) return false;
  const calls = d.tool_calls;
  return nullish(calls) || (Array.isArray(calls) && calls.every(toolCallDeltaOk));
}

function usageOk(v: unknown): boolean {
  if (nullish(v)) return true;
  return (
    isObject(v) &&
    isNumber(v.prompt_tokens) &&
    isNumber(v.completion_tokens) &&
    (v.total_tokens === undefined || isNumber(v.total_tokens))
  );
}

/**
 * A parsed stream chunk when `StreamChunk` accepts it (the value itself: only its known fields are
 * read), else undefined. The hand-written check of the schema above, without zod's per-chunk
 * objects and context.
 */
export function readStreamChunk(v: unknown): StreamChunk | undefined {
  if (!isObject(v) || !usageOk(v.usage)) return undefined;
  const choices = v.choices;
  if (!nullish(choices) && !(Array.isArray(choices) && choices.every(choiceOk))) return undefined;
  return v as StreamChunk;
}

/** An id for a tool call the upstream sent without one (clients answer a call by its id). */
function callId(): string {
  return `call_${randomToken(24)}`;
}

/** A message's text: the string, or its text parts joined by newlines (image parts add none). */
export function contentText(content: ChatMessageIn['content']): string {
  if (content === null || typeof content === 'string') return content ?? '';
  return content
    .filter((p) => p.type === 'text')
    .map((p) => p.text)
    .join('\n');
}

/** Rough token count (4 characters a token) for upstreams that report no usage. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** The upstream's usage, else an estimate (the caller marks it `usage_estimated`). */
function usageOf(u: z.infer<typeof Usage> | null | undefined, messages: ChatMessageIn[], output: string): ModelUsage {
  if (u)
    return {
      prompt_tokens: u.prompt_tokens,
      completion_tokens: u.completion_tokens,
      total_tokens: u.total_tokens ?? u.prompt_tokens + u.completion_tokens,
    };
  const images = messages.reduce(
    (n, m) => n + (Array.isArray(m.content) ? m.content.filter((p) => p.type === 'image_url').length : 0),
    0,
  );
  // 85 tokens an image: OpenAI's charge for a low-detail one.
  const prompt = estimateTokens(messages.map((m) => contentText(m.content)).join('\n')) + 85 * images;
  const completion = estimateTokens(output);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/** What stays the same for every call to one upstream: its pool, where it is, and the request headers. */
interface Upstream {
  pool: Agent;
  origin: string;
  path: string;
  /** Headers for a JSON answer and for a stream (provider headers first, ours win). */
  headers: { json: Record<string, string>; stream: Record<string, string> };
}

const upstreams = new WeakMap<ProviderDef, Upstream>();

/**
 * The keep-alive connection pool of one upstream (undici Agent): connections are reused across
 * requests instead of paying a TCP (and TLS) handshake per call. The pool's own `dispatch` with our
 * handler (upstream-call.ts) rather than fetch (WHATWG streams and Request/Response objects per
 * call) or `request` (a Readable and an AsyncResource per call); the URL is parsed once. Provider
 * definitions live as long as the process's one model router, so each upstream gets one pool,
 * and its endpoint and headers are worked out once.
 */
function upstreamOf(p: ProviderDef): Upstream {
  let u = upstreams.get(p);
  if (!u) {
    const url = new URL(`${p.baseUrl.replace(/\/+$/, '')}/chat/completions`);
    const headers = (accept: string) => {
      const own: Record<string, string> = { 'content-type': 'application/json', accept };
      if (p.apiKey) own.authorization = `Bearer ${p.apiKey}`;
      return { ...p.headers, ...own };
    };
    u = {
      pool: new Agent({ keepAliveTimeout: 30_000, connections: 128, pipelining: 1 }),
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      headers: { json: headers('application/json'), stream: headers('text/event-stream') },
    };
    upstreams.set(p, u);
  }
  return u;
}

function send(t: Target, req: ModelRequest, stream: boolean, a: AttemptControl): UpstreamCall {
  const body: Record<string, unknown> = { ...req.extra, model: t.model, messages: req.messages, stream };
  if (req.temperature !== undefined) body.temperature = req.temperature;
  if (req.max_tokens !== undefined) body.max_tokens = req.max_tokens;
  if (req.tools && req.tools.length > 0) body.tools = req.tools;
  if (req.tool_choice !== undefined) body.tool_choice = req.tool_choice;
  if (stream) body.stream_options = { include_usage: true };
  const u = upstreamOf(t.provider);
  const call = new UpstreamCall(!stream);
  a.attach(call);
  return call.send(u.pool, {
    origin: u.origin,
    path: u.path,
    method: 'POST',
    headers: stream ? u.headers.stream : u.headers.json,
    body: JSON.stringify(body),
  });
}

const ok = (status: number) => status >= 200 && status < 300;
function retryAfterOf(headers: IncomingHttpHeaders): string | null {
  const v = headers['retry-after'];
  return (Array.isArray(v) ? v[0] : v) ?? null;
}

/** One non-streaming call to one provider. */
export async function completeOnce(t: Target, req: ModelRequest, remainingMs: number): Promise<ModelResult> {
  const limit = Math.max(1, Math.min(t.provider.timeoutMs, remainingMs));
  const a = new AttemptControl(req.signal, limit, limit);
  try {
    const res = await send(t, req, false, a).result;
    if (!ok(res.status)) throw faultFromStatus(t.provider.name, res.status, retryAfterOf(res.headers));
    let parsed: z.infer<typeof Completion>;
    try {
      parsed = Completion.parse(JSON.parse(res.body.toString('utf8')));
    } catch {
      throw upstreamFault(
        'upstream_error',
        `The model provider '${t.provider.name}' answered with an unreadable completion.`,
        { fallback: true },
      );
    }
    const choice = parsed.choices[0];
    const content = storableText(choice.message.content ?? '');
    const toolCalls = choice.message.tool_calls?.map((c) => ({
      ...c,
      id: c.id || callId(),
      function: { name: storableText(c.function.name), arguments: storableText(c.function.arguments) },
    }));
    return {
      content,
      finish_reason: choice.finish_reason ?? (toolCalls?.length ? 'tool_calls' : 'stop'),
      ...(toolCalls?.length ? { tool_calls: toolCalls } : {}),
      ...(choice.logprobs !== undefined && choice.logprobs !== null ? { logprobs: choice.logprobs } : {}),
      usage: usageOf(parsed.usage, req.messages, content),
      ...(parsed.usage ? {} : { usage_estimated: true }),
      provider: t.provider.name,
    };
  } catch (err) {
    throw a.translate(t.provider.name, err, false);
  } finally {
    a.done();
  }
}

export interface OpenedStream {
  chunks: AsyncGenerator<ModelStreamChunk>;
}

/**
 * Opens a streaming call: resolves once the upstream answered 2xx (so the router may still
 * fall back on connect errors, 429 and 5xx), then yields deltas. Returning early from the
 * generator aborts the upstream request.
 */
export async function openStream(t: Target, req: ModelRequest, remainingMs: number): Promise<OpenedStream> {
  const idle = Math.max(1, Math.min(t.provider.timeoutMs, remainingMs));
  const a = new AttemptControl(req.signal, idle, Math.max(1, remainingMs));
  const call = send(t, req, true, a);
  // Made while the upstream answers: the first events are parsed as soon as they arrive.
  const events = new SseEvents();
  try {
    const res = await call.started;
    if (!ok(res.status)) {
      await call.result.catch(() => undefined);
      throw faultFromStatus(t.provider.name, res.status, retryAfterOf(res.headers));
    }
  } catch (err) {
    a.done();
    throw a.translate(t.provider.name, err, false);
  }
  const provider = t.provider.name;
  let output = '';
  let finish: string | undefined;
  let usage: z.infer<typeof Usage> | undefined;
  const calls: Array<{ id: string; name: string; arguments: string }> = [];
  /** Tool-call fragments read since the last yield. */
  const fragments: NonNullable<ModelStreamChunk['tool_deltas']> = [];
  /** The last data event's log probabilities, until yielded. */
  let logprobs: unknown;
  /** One SSE data payload → the delta it carries ('' when none). @throws AppError upstream_error */
  const read = (data: string): string => {
    let chunk: StreamChunk | undefined;
    try {
      chunk = readStreamChunk(JSON.parse(data));
    } catch {
      chunk = undefined;
    }
    if (!chunk) {
      throw upstreamFault('upstream_error', `The model provider '${provider}' sent an unreadable stream chunk.`, {
        fallback: false,
      });
    }
    if (chunk.error !== undefined) {
      throw upstreamFault('upstream_error', `The model provider '${provider}' reported an error mid-stream.`, {
        fallback: false,
      });
    }
    if (chunk.usage) usage = chunk.usage;
    const choice = chunk.choices?.[0];
    if (!choice) return '';
    for (const tc of choice.delta?.tool_calls ?? []) {
      const first = calls[tc.index] === undefined;
      const c = (calls[tc.index] ??= { id: tc.id || callId(), name: '', arguments: '' });
      const name = tc.function?.name ? storableText(tc.function.name) : '';
      const args = tc.function?.arguments ? storableText(tc.function.arguments) : '';
      c.name += name;
      c.arguments += args;
      if (first || name || args)
        fragments.push({ index: tc.index, ...(first ? { id: c.id } : {}), ...(name ? { name } : {}), arguments: args });
    }
    if (choice.finish_reason) finish = choice.finish_reason;
    const lp = (choice as { logprobs?: unknown }).logprobs;
    if (lp !== undefined && lp !== null) logprobs = lp;
    // Each delta on its own: a server writes a character's surrogate pair in one chunk's JSON string.
    return storableText(choice.delta?.content ?? '');
  };
  async function* chunks(): AsyncGenerator<ModelStreamChunk> {
    let ended = false;
    try {
      // The bytes come from the call's queue and are parsed synchronously: one generator per stream.
      reading: for (;;) {
        const parts = call.take();
        let batch: string[];
        if (parts === null) batch = events.end();
        else if (parts.length === 0) {
          await call.wait();
          continue;
        } else {
          a.touch();
          batch = parts.length === 1 ? events.push(parts[0]) : parts.flatMap((p) => events.push(p));
        }
        for (const data of batch) {
          if (data.trim() === '[DONE]') {
            ended = true;
            break reading;
          }
          const delta = read(data);
          if (delta) output += delta;
          if (fragments.length || logprobs !== undefined) {
            const chunk: ModelStreamChunk = { delta };
            if (fragments.length) chunk.tool_deltas = fragments.splice(0);
            if (logprobs !== undefined) chunk.logprobs = logprobs;
            logprobs = undefined;
            yield chunk;
          } else if (delta) yield { delta };
        }
        if (parts === null) break;
      }
      if (!ended && !finish) {
        throw upstreamFault(
          'upstream_error',
          `The model provider '${provider}' ended the stream before the answer was complete.`,
          { fallback: false },
        );
      }
      const toolCalls = calls
        .filter(Boolean)
        .map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } }));
      yield {
        delta: '',
        finish_reason: finish ?? (toolCalls.length ? 'tool_calls' : 'stop'),
        usage: usageOf(usage, req.messages, output),
        ...(usage ? {} : { usage_estimated: true }),
        ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
      };
    } catch (err) {
      throw a.translate(provider, err, true);
    } finally {
      a.cancel();
    }
  }
  return { chunks: chunks() };
}

import { createModelRouter } from '../../activities/providers';
import type {
  ModelRequest,
  ModelResult,
  ModelRouter,
  ModelStreamChunk,
  ModelUsage,
} from '../../activities/providers/types';
import { randomToken } from '../../activities/store/ids';
import { SAMPLING_KEYS, type UtilityChatRequest } from '../../schema/chat';
import { AppError } from '../../schema/errors';
import type { AppContext } from '../context';
import type { AppDeps } from '../deps';

const routers = new WeakMap<AppDeps, ModelRouter>();

/** The app's model router: `deps.models`, else one built from `deps.config` once per deps object. */
export function modelsOf(deps: AppDeps): ModelRouter {
  if (deps.models) return deps.models;
  let r = routers.get(deps);
  if (!r) {
    r = createModelRouter(deps.config, { log: deps.log });
    routers.set(deps, r);
  }
  return r;
}

export function completionId(): string {
  return `chatcmpl-${randomToken(24)}`;
}

/** OpenAI sampling fields of a request, as the router wants them. */
export function samplingOf(
  body: Partial<Omit<UtilityChatRequest, 'messages'>>,
): Pick<ModelRequest, 'temperature' | 'max_tokens' | 'extra'> {
  const extra: Record<string, unknown> = {};
  for (const k of SAMPLING_KEYS) if (body[k] !== undefined && k !== 'temperature') extra[k] = body[k];
  return {
    temperature: body.temperature,
    max_tokens: body.max_tokens ?? body.max_completion_tokens,
    extra: Object.keys(extra).length ? extra : undefined,
  };
}

/**
 * An AbortSignal that fires when the client goes away before the response is complete,
 * so the upstream call stops too.
 */
export function abortOnDisconnect(ctx: AppContext): AbortController {
  const ctl = new AbortController();
  ctx.res.once('close', () => {
    if (!ctx.res.writableFinished) ctl.abort(new Error('client disconnected'));
  });
  return ctl;
}

/**
 * Awaits a model call; when the client hung up meanwhile, the abort is reported as a client
 * error (logged as 4xx, not as a server fault; nobody reads the answer anyway).
 */
export async function unlessClientGone<T>(abort: AbortController, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (abort.signal.aborted && !(err instanceof AppError)) {
      throw new AppError('invalid_request', 'The client closed the connection before the answer was complete.');
    }
    throw err;
  }
}

/**
 * The finish reason a client is told. A route that offered the upstream no client tools (the lanes, the commons
 * lane, a persona chat without `tools`) hands the client no tool calls, so an upstream's "tool_calls" would promise
 * calls that are not there: "stop" then.
 */
export function clientFinishReason(reason: string, toolsOffered = false): string {
  return !toolsOffered && (reason === 'tool_calls' || reason === 'function_call') ? 'stop' : reason;
}

/** Two calls' token usage together. */
export function sumUsage(a: ModelUsage, b: ModelUsage): ModelUsage {
  return {
    prompt_tokens: a.prompt_tokens + b.prompt_tokens,
    completion_tokens: a.completion_tokens + b.completion_tokens,
    total_tokens: a.total_tokens + b.total_tokens,
  };
}

export function completionBody(opts: {
  id: string;
  /** Seconds since the epoch; now when not given. */
  created?: number;
  lane: string;
  result: ModelResult;
  /** The other choices when `n` > 1 (each its own lane call). */
  more?: ModelResult[];
  meta: Record<string, unknown>;
  /** The client offered tools (persona route): the model's calls go to the client. */
  toolsOffered?: boolean;
  /** A choice's annotations from its text (web search citations). */
  annotate?: (content: string) => unknown[];
}) {
  const results = [opts.result, ...(opts.more ?? [])];
  // OpenAI's contract requires logprobs and message.refusal (null when absent); logprobs as the lane gave them.
  const choices = results.map((r, index) => {
    const calls = opts.toolsOffered && r.tool_calls?.length ? r.tool_calls : undefined;
    return {
      index,
      message: {
        role: 'assistant' as const,
        // As OpenAI answers a turn of tool calls only: content null.
        content: calls && !r.content ? null : r.content,
        refusal: null,
        ...(opts.annotate ? { annotations: opts.annotate(r.content) } : {}),
        ...(calls ? { tool_calls: calls } : {}),
      },
      logprobs: r.logprobs ?? null,
      finish_reason: clientFinishReason(r.finish_reason, opts.toolsOffered),
    };
  });
  const usage = opts.more?.length ? results.map((r) => r.usage).reduce(sumUsage) : opts.result.usage;
  return {
    id: opts.id,
    object: 'chat.completion' as const,
    created: opts.created ?? Math.floor(Date.now() / 1000),
    model: opts.lane,
    choices,
    usage,
    meta: { provider: opts.result.provider, ...opts.meta },
  };
}

function noteUsage(ctx: AppContext, lane: string, usage: ModelUsage, estimated: boolean | undefined): void {
  const u = (ctx.state.usage ??= { lane, promptTokens: 0, completionTokens: 0, estimated: false });
  u.promptTokens += usage.prompt_tokens;
  u.completionTokens += usage.completion_tokens;
  if (estimated) u.estimated = true;
}

/** The app's model router, recording this request's token usage (for limits and the usage report). */
export function modelsFor(ctx: AppContext): ModelRouter {
  const m = modelsOf(ctx.deps);
  return {
    lanes: () => m.lanes(),
    hasLane: (lane) => m.hasLane(lane),
    complete: async (req) => {
      ctx.state.usage ??= { lane: req.lane, promptTokens: 0, completionTokens: 0, estimated: false };
      const r = await m.complete(req);
      noteUsage(ctx, req.lane, r.usage, r.usage_estimated);
      return r;
    },
    stream: (req) => {
      ctx.state.usage ??= { lane: req.lane, promptTokens: 0, completionTokens: 0, estimated: false };
      const s = m.stream(req);
      const inner = s[Symbol.asyncIterator]();
      // An iterator object rather than a generator around the stream: no extra layer per chunk.
      const counted: AsyncIterableIterator<ModelStreamChunk> = {
        next: () =>
          inner.next().then((r) => {
            if (!r.done && r.value.usage) noteUsage(ctx, req.lane, r.value.usage, r.value.usage_estimated);
            return r;
          }),
        return: (value?: unknown) => inner.return?.(value) ?? Promise.resolve({ done: true as const, value }),
        [Symbol.asyncIterator]: () => counted,
      };
      return Object.assign(counted, { provider: s.provider });
    },
  };
}

/** A lane id checked against the lanes there are. @throws AppError model_not_found */
export function checkedLane(models: Pick<ModelRouter, 'hasLane'>, lane: string): void {
  if (!models.hasLane(lane))
    throw new AppError(
      'model_not_found',
      `The model '${lane}' does not exist. GET /v1/models lists the available lanes.`,
    );
}

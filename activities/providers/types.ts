/**
 * The model-provider layer's public interface (implemented in activities/providers/).
 * Everything that calls a model (chat gateway, task actions, goals, PAD, swarm) goes through
 * a ModelRouter built once per process from the Config: `createModelRouter(config)`.
 */
/** A part of a user message with an image: OpenAI's text and `image_url` parts. */
export type ContentPartIn =
  { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string; detail?: 'auto' | 'low' | 'high' } };

export interface ChatMessageIn {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null | ContentPartIn[];
  name?: string;
  tool_call_id?: string;
  tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>;
}

export interface ModelRequest {
  /** Public lane id: svc-oracle, mid, mid-strong, micro, nano, slm-fast, slm-code, slm-reason. */
  lane: string;
  messages: ChatMessageIn[];
  temperature?: number;
  max_tokens?: number;
  tools?: unknown[];
  tool_choice?: unknown;
  /** Aborts the upstream request (client disconnect, workflow cancellation). */
  signal?: AbortSignal;
  /** Overall time limit for the upstream call, in ms. */
  timeoutMs?: number;
  /** Other OpenAI sampling parameters passed through as given (top_p, stop, seed, response_format, ...). */
  extra?: Record<string, unknown>;
}

export interface ModelUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface ModelResult {
  content: string;
  finish_reason: string;
  tool_calls?: ChatMessageIn['tool_calls'];
  usage: ModelUsage;
  /** True when the upstream reported no usage and `usage` is our estimate. */
  usage_estimated?: boolean;
  /** Public provider name (never the upstream model id). */
  provider: string;
  /** The choice's `logprobs` as the upstream gave them (when asked for and not null). */
  logprobs?: unknown;
}

export interface ModelStreamChunk {
  /** Text delta; empty string for non-text chunks. */
  delta: string;
  finish_reason?: string;
  usage?: ModelUsage;
  usage_estimated?: boolean;
  /** On the last chunk, when the model asked for tools: the assembled calls. */
  tool_calls?: ChatMessageIn['tool_calls'];
  /**
   * Tool-call fragments as they arrive: a call's first fragment has its `id` (the upstream's, else one of ours, the
   * same the assembled call gets) and `name`; the following ones carry more `arguments` text.
   */
  tool_deltas?: Array<{ index: number; id?: string; name?: string; arguments: string }>;
  /** The upstream chunk's `logprobs` for this delta (when asked for and not null). */
  logprobs?: unknown;
}

export interface ModelRouter {
  /** Public lanes with their availability. */
  lanes(): Array<{ id: string; provider: string | null; available: boolean }>;
  hasLane(lane: string): boolean;
  /** @throws AppError model_not_found / service_unavailable / upstream_error / upstream_timeout / rate_limited */
  complete(req: ModelRequest): Promise<ModelResult>;
  /** Streams deltas; fallback to the next provider only before the first byte. Same errors as complete. */
  stream(req: ModelRequest): AsyncIterable<ModelStreamChunk> & { provider: Promise<string> };
}

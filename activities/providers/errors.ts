import { AppError } from '../../schema/errors';

const FALLBACK = Symbol('fallback');

/** An upstream fault; `fallback` says whether the next provider of the lane may be tried. */
export function upstreamFault(
  code: 'upstream_error' | 'upstream_timeout' | 'rate_limited',
  message: string,
  opts: { fallback: boolean; headers?: Record<string, string>; cause?: unknown },
): AppError {
  const err = new AppError(code, message, { headers: opts.headers, cause: opts.cause });
  (err as unknown as Record<symbol, boolean>)[FALLBACK] = opts.fallback;
  return err;
}

export function canFallback(err: unknown): boolean {
  return err instanceof AppError && (err as unknown as Record<symbol, boolean>)[FALLBACK] === true;
}

/** Retry-After as whole seconds: copies delta-seconds, converts an HTTP date, defaults to 1. */
export function retryAfterSeconds(value: string | null): string {
  if (value) {
    if (/^\d+$/.test(value.trim())) return value.trim();
    const at = Date.parse(value);
    if (!Number.isNaN(at)) return String(Math.max(1, Math.ceil((at - Date.now()) / 1000)));
  }
  return '1';
}

/** Maps a non-2xx upstream answer. The upstream body is not forwarded: it may name upstream model ids. */
export function faultFromStatus(provider: string, status: number, retryAfter: string | null): AppError {
  if (status === 429) {
    const secs = retryAfterSeconds(retryAfter);
    return upstreamFault(
      'rate_limited',
      `The model provider '${provider}' is rate limiting requests; retry after ${secs} s.`,
      {
        fallback: true,
        headers: { 'Retry-After': secs },
      },
    );
  }
  if (status >= 500) {
    return upstreamFault('upstream_error', `The model provider '${provider}' failed (HTTP ${status}).`, {
      fallback: true,
    });
  }
  if (status === 401 || status === 403) {
    return upstreamFault(
      'upstream_error',
      `The model provider '${provider}' refused our credentials (HTTP ${status}); check its API key.`,
      {
        fallback: true,
      },
    );
  }
  if (status === 408) {
    return upstreamFault('upstream_timeout', `The model provider '${provider}' timed out (HTTP 408).`, {
      fallback: false,
    });
  }
  return upstreamFault('upstream_error', `The model provider '${provider}' rejected the request (HTTP ${status}).`, {
    fallback: false,
  });
}

function causeCode(err: unknown): string | undefined {
  let e: unknown = err;
  for (let i = 0; i < 4 && e && typeof e === 'object'; i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Maps a transport failure (fetch threw, or the body stream broke). */
export function faultFromNetwork(provider: string, err: unknown, started: boolean): AppError {
  const code = causeCode(err);
  const what = code ? ` (${code})` : '';
  if (!started) {
    return upstreamFault('upstream_error', `Could not reach the model provider '${provider}'${what}.`, {
      fallback: true,
      cause: err,
    });
  }
  return upstreamFault(
    'upstream_error',
    `The connection to the model provider '${provider}' broke mid-answer${what}.`,
    {
      fallback: false,
      cause: err,
    },
  );
}

export function timeoutFault(provider: string, ms: number): AppError {
  return upstreamFault('upstream_timeout', `The model provider '${provider}' did not answer within ${ms} ms.`, {
    fallback: false,
  });
}

export function noProviderError(lane: string): AppError {
  return new AppError(
    'service_unavailable',
    `No model provider is configured for lane '${lane}'. Set OPENAI_BASE_URL (and OPENAI_API_KEY) to any ` +
      'OpenAI-compatible server (OpenAI, Ollama, vLLM, llama.cpp, LM Studio, OpenRouter), or point SVC_CONFIG at a ' +
      'YAML/JSON file with providers and lanes, or run Ollama on 127.0.0.1:11434.',
  );
}

import type { IncomingMessage, ServerResponse } from 'node:http';

/** What a browser script may read of an answer besides the CORS-safelisted headers. */
const EXPOSED = [
  'X-Request-Id',
  'Retry-After',
  'Idempotent-Replayed',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'x-ratelimit-limit-requests',
  'x-ratelimit-remaining-requests',
  'x-ratelimit-reset-requests',
  'x-ratelimit-limit-tokens',
  'x-ratelimit-remaining-tokens',
  'x-ratelimit-reset-tokens',
].join(', ');
const METHODS = 'GET, POST, PUT, PATCH, DELETE';
/** Request headers a preflight may ask for: header names only (RFC 9110 tokens), at most 2 KB. */
const HEADER_LIST = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+(\s*,\s*[!#$%&'*+.^_`|~0-9A-Za-z-]+)*$/;

/**
 * CORS for browser clients (SVC_CORS_ORIGINS), before anything else answers: an allowed origin gets
 * Access-Control-Allow-Origin (and the headers it may read) on every answer, errors included, and its preflight is
 * answered 204 here, without a key (a browser sends none on a preflight). Keys travel in the Authorization header,
 * never in cookies, so credentials are never allowed. Returns true when the request was answered (a preflight).
 * Undefined when no origin is allowed: no CORS header is ever sent.
 */
export function corsHandler(
  origins: '*' | string[] | undefined,
): ((req: IncomingMessage, res: ServerResponse) => boolean) | undefined {
  if (origins === undefined || (origins !== '*' && origins.length === 0)) return undefined;
  const allowed = origins === '*' ? undefined : new Set(origins);
  return (req, res) => {
    const origin = req.headers.origin;
    if (origin === undefined) return false;
    if (allowed && !allowed.has(origin.toLowerCase())) return false;
    res.setHeader('Access-Control-Allow-Origin', allowed ? origin : '*');
    if (allowed) res.setHeader('Vary', 'Origin');
    const wanted = req.headers['access-control-request-method'];
    if (req.method !== 'OPTIONS' || wanted === undefined) {
      res.setHeader('Access-Control-Expose-Headers', EXPOSED);
      return false;
    }
    const asked = req.headers['access-control-request-headers'];
    const headers = asked && asked.length <= 2048 && HEADER_LIST.test(asked) ? asked : 'Authorization, Content-Type';
    res.writeHead(204, {
      'Access-Control-Allow-Methods': METHODS,
      'Access-Control-Allow-Headers': headers,
      'Access-Control-Max-Age': '600',
    });
    res.end();
    req.resume();
    return true;
  };
}

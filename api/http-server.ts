import http from 'node:http';
import type { Socket } from 'node:net';
import type Koa from 'koa';
import type { Logger } from 'pino';
import type { Config } from '../schema/config';
import { ERROR_STATUS, type ErrorCode } from '../schema/errors';

/** A complete HTTP/1.1 answer with our ErrorResponse body, written straight to a socket. */
function rawError(code: ErrorCode, message: string, headers = ''): string {
  const status = ERROR_STATUS[code];
  const body = JSON.stringify({ error: message, code });
  return (
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? 'Error'}\r\n${headers}` +
    `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}

/** Connections past their address's cap: their first request (or WebSocket upgrade) is answered 429. */
const overCap = new WeakSet<object>();

/**
 * The raw 429 for a WebSocket upgrade on a connection past the per-address cap (an upgrade never reaches the
 * request handler that answers the others), or undefined when the connection is within the cap.
 */
export function connectionCapRefusal(socket: object, limit: number): string | undefined {
  if (!overCap.has(socket)) return undefined;
  return rawError(
    'rate_limited',
    `Too many open connections from this address (limit ${limit}).`,
    'Retry-After: 1\r\n',
  );
}

/** Node's parser error codes → our code and sentence (what Node would answer, but as JSON). */
function parserError(err: NodeJS.ErrnoException): [ErrorCode, string] {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return ['header_too_large', 'Request headers are too large.'];
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return ['request_timeout', 'The request headers did not arrive in time.'];
    case 'HPE_INVALID_CHUNK_SIZE':
      return ['invalid_request', 'Malformed chunked request body (invalid chunk size).'];
    case 'HPE_INVALID_URL':
      return ['invalid_request', 'Malformed request URL.'];
    default:
      return ['invalid_request', 'Malformed HTTP request.'];
  }
}

/**
 * The HTTP server of the API. Parser-level errors get the same JSON error body as every route
 * (`clientError`); request headers must arrive within `headersTimeoutMs`; at most
 * `maxConnectionsPerAddress` open connections per client address (429 beyond). `requestTimeout`
 * stays 0 because Node counts a whole request against it and SSE/WebSocket must stay open: bodies
 * get their own deadline in `api/middleware/body-timeout.ts`.
 */
export function createHttpServer(app: Pick<Koa, 'callback'>, config: Config, log: Logger): http.Server {
  const { headersTimeoutMs, maxConnectionsPerAddress } = config.http;
  const callback = app.callback();
  const server = http.createServer(
    {
      requestTimeout: 0,
      headersTimeout: headersTimeoutMs,
      connectionsCheckingInterval: Math.min(30_000, Math.max(50, headersTimeoutMs / 4)),
    },
    (req, res) => {
      if (!overCap.has(req.socket)) return void callback(req, res);
      // Over the per-address cap: answer its first request with 429 and close the connection.
      const body = JSON.stringify({
        error: `Too many open connections from this address (limit ${maxConnectionsPerAddress}).`,
        code: 'rate_limited',
      });
      res.writeHead(ERROR_STATUS.rate_limited, {
        'Content-Type': 'application/json; charset=utf-8',
        'Content-Length': Buffer.byteLength(body),
        'Retry-After': '1',
        Connection: 'close',
      });
      res.end(body);
      req.resume();
    },
  );

  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    if (err.code === 'ECONNRESET' || err.code === 'EPIPE' || !socket.writable) {
      socket.destroy();
      return;
    }
    const [code, message] = parserError(err);
    // A request whose response already started (e.g. a bad chunk mid-body) cannot get a second status line.
    const inFlight = (socket as Socket & { _httpMessage?: http.ServerResponse })._httpMessage;
    if (!inFlight?.headersSent) socket.end(rawError(code, message));
    else socket.destroy();
    log.debug({ code: err.code }, 'malformed HTTP request refused');
  });

  if (maxConnectionsPerAddress > 0) {
    const open = new Map<string, number>();
    server.on('connection', (socket: Socket) => {
      const address = socket.remoteAddress ?? 'unknown';
      const count = (open.get(address) ?? 0) + 1;
      if (count > maxConnectionsPerAddress) {
        overCap.add(socket);
        return;
      }
      open.set(address, count);
      socket.once('close', () => {
        const left = (open.get(address) ?? 1) - 1;
        if (left <= 0) open.delete(address);
        else open.set(address, left);
      });
    });
  }
  return server;
}

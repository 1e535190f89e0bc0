import type { IncomingMessage } from 'node:http';
import { AppError } from '../schema/errors';

// co-body strict mode: RFC 7159 whitespace, then an object or an array.
const STRICT_JSON = /^[ \t\n\r]*(\[|\{)/;

/**
 * Whether `readJsonBody` may read this request instead of koa-body: a plain `application/json`
 * POST, PUT or PATCH body with a Content-Length within the limit and no Content-Encoding, not
 * read yet. Everything
 * else (other JSON media types, compressed or chunked bodies, a length over the limit) keeps
 * going through koa-body, whose answers for those cases stay as they were.
 */
export function plainJsonBody(req: IncomingMessage, limit: number): boolean {
  // koa-body parses these methods only (a DELETE's body is left unread).
  if (req.method !== 'POST' && req.method !== 'PUT' && req.method !== 'PATCH') return false;
  const type = req.headers['content-type'];
  if (type === undefined || req.headers['content-encoding'] !== undefined) return false;
  const semi = type.indexOf(';');
  if ((semi < 0 ? type : type.slice(0, semi)).trim().toLowerCase() !== 'application/json') return false;
  const len = req.headers['content-length'];
  if (len === undefined || !/^[0-9]{1,10}$/.test(len)) return false;
  const n = Number(len);
  return n > 0 && n <= limit && !req.readableDidRead;
}

/** bourne's check (co-body's `onProtoPoisoning: 'error'`): no own `__proto__`, no `constructor.prototype`. */
function poisoned(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.some(poisoned);
  if (Object.hasOwn(value, '__proto__')) return true;
  const c = (value as { constructor?: unknown }).constructor;
  if (Object.hasOwn(value, 'constructor') && c !== null && typeof c === 'object' && Object.hasOwn(c, 'prototype'))
    return true;
  for (const k in value) if (poisoned((value as Record<string, unknown>)[k])) return true;
  return false;
}

/** The body text as JSON, by co-body's rules as koa-body applies them here. @throws AppError invalid_json */
function parseJson(bytes: Buffer): unknown {
  let text = bytes.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  try {
    if (!STRICT_JSON.test(text)) throw new SyntaxError('invalid JSON, only supports object and array');
    const parsed: unknown = JSON.parse(text);
    if ((text.includes('proto') || text.includes('constructor') || text.includes('\\u')) && poisoned(parsed))
      throw new SyntaxError('Object contains forbidden prototype property');
    return parsed;
  } catch {
    throw new AppError('invalid_json', 'Request body is not valid JSON.');
  }
}

/**
 * Reads and parses a body `plainJsonBody` accepted, with co-body's rules as koa-body applies them
 * here (UTF-8 with a leading BOM dropped, strict: an object or array, prototype poisoning refused).
 * Errors: an error the request stream emits (e.g. the body timeout's 408) as is; a body that is
 * not JSON → invalid_json; a connection closed before the whole body → invalid_request.
 */
export function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const length = Number(req.headers['content-length']);
  // A small body usually came in the packet of the headers and already waits in the request's
  // buffer, all of it (the parser never buffers more than Content-Length): take it at once,
  // without stream events and listeners.
  if (req.readableLength === length && req.readableFlowing === null && !req.destroyed) {
    try {
      return Promise.resolve(parseJson(req.read() as Buffer));
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
      req.off('close', onClose);
    };
    const fail = (err: unknown) => {
      cleanup();
      reject(err as Error);
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      chunks.push(chunk);
    };
    const onError = (err: Error) => fail(err);
    const incomplete = () =>
      fail(new AppError('invalid_request', 'The request body ended before its Content-Length was reached.'));
    const onAborted = () => incomplete();
    const onClose = () => {
      if (!req.complete) incomplete();
    };
    const onEnd = () => {
      cleanup();
      if (received !== length) return incomplete();
      try {
        resolve(parseJson(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, received)));
      } catch (err) {
        reject(err as Error);
      }
    };
    req.on('data', onData);
    req.once('end', onEnd);
    req.on('error', onError);
    req.once('aborted', onAborted);
    req.once('close', onClose);
  });
}

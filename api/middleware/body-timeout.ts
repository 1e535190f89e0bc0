import { AppError } from '../../schema/errors';
import type { AppContext, AppMiddleware } from '../context';

function expectsBody(ctx: AppContext): boolean {
  const len = ctx.get('Content-Length');
  return (len !== '' && len !== '0') || ctx.get('Transfer-Encoding') !== '';
}

/** Whether every byte of a Content-Length body is in the request's buffer (not read yet). */
function allArrived(ctx: AppContext): boolean {
  const len = ctx.get('Content-Length');
  return len !== '' && ctx.req.readableLength >= Number(len);
}

/**
 * A request body must arrive completely within `ms` of the request (408 otherwise), so a client
 * cannot hold a connection by never finishing its body. Only the upload is timed: once the body
 * has arrived (or when there is none: SSE, WebSocket, GETs) the response may take as long as it
 * needs. The timeout surfaces as an error on the request stream, so whichever parser is reading
 * (JSON or multipart) fails with it and the error middleware answers 408 and closes the connection.
 * The timer is armed only if the body is still incomplete once the packet that brought the
 * headers has been parsed (checked in a microtask): a small body comes with its headers, and then
 * no timer or listener is needed.
 */
export function bodyTimeout(ms: number): AppMiddleware {
  return async (ctx: AppContext, next) => {
    const req = ctx.req;
    if (!expectsBody(ctx) || req.complete) return next();
    let done = false;
    let timer: NodeJS.Timeout | undefined;
    const stop = () => {
      done = true;
      clearTimeout(timer);
    };
    queueMicrotask(() => {
      if (done || req.complete || allArrived(ctx)) return;
      // Without a listener an 'error' on the request would crash the process; parsers add their own.
      req.on('error', () => {});
      timer = setTimeout(() => {
        if (req.complete || ctx.res.headersSent) return;
        req.emit(
          'error',
          new AppError('request_timeout', `The request body did not arrive within ${ms} ms.`, {
            headers: { Connection: 'close' },
          }),
        );
        // A parser that did not see the error (e.g. behind a decompression stream) would wait forever:
        // close the connection if no answer went out shortly after.
        setTimeout(() => {
          if (!ctx.res.headersSent) req.destroy();
        }, 1000).unref();
      }, ms);
      timer.unref();
      // On the request, not the response: Koa and pipeline already hang ten listeners on a streamed response.
      req.once('end', stop);
      req.once('close', stop);
    });
    try {
      await next();
    } finally {
      stop();
    }
  };
}

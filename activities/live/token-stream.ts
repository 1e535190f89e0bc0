import type { Logger } from 'pino';
import type { Db } from '../store/db';
import { publishTokens } from './publish';

/** One generation's token frames for the WebSocket plane (`token` frames, then `done`). */
export interface TokenTap {
  push(delta: string): void;
  /** The generation ended (completed or failed): flush what is left, then `done`. */
  end(): void;
}

/**
 * Publishes one generation's deltas to the sockets subscribed to `session` (on any replica, through PostgreSQL's
 * NOTIFY), off the caller's path: at most one NOTIFY round trip in flight, everything that arrived meanwhile goes in
 * the next, so order holds and a fast stream costs a few statements, not one per token.
 */
export function tokenStream(deps: { db: Db; log: Logger }, tenantId: string, session: string): TokenTap {
  let buf = '';
  let ended = false;
  let sentDone = false;
  let inFlight = false;
  let seq = 0;
  let scheduled = false;
  const schedule = () => {
    if (inFlight || scheduled) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      flush();
    });
  };
  const flush = () => {
    if (inFlight || sentDone || (!buf && !ended)) return;
    const content = buf;
    buf = '';
    const done = ended;
    inFlight = true;
    const first = seq;
    seq += Math.ceil(content.length / 1500) + 1;
    publishTokens(deps.db, { tenantId, session, content, done, seq: first })
      .catch((err: Error) => deps.log.warn({ err: err.message }, 'token frames not published'))
      .finally(() => {
        inFlight = false;
        if (done) sentDone = true;
        else flush();
      });
  };
  return {
    push(delta) {
      if (ended || !delta) return;
      buf += delta;
      schedule();
    },
    end() {
      if (ended) return;
      ended = true;
      schedule();
    },
  };
}

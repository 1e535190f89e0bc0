import type { Logger } from 'pino';
import { publishTokens } from '../../activities/live/publish';
import type { Db } from '../../activities/store/db';
import { liveInterestOf } from './interest';

export interface TokenTap {
  push(delta: string): void;
  /** The generation ended (completed or failed): flush what is left, then `done`. */
  end(): void;
}

/**
 * A tap for one generation, or undefined when no client on any replica subscribed to it (the
 * chat path then pays nothing). Deltas are buffered and published off the hot path: at most one
 * NOTIFY round trip in flight per generation, everything that arrived meanwhile goes in the next,
 * so order holds and a fast stream costs a few statements, not one per token.
 */
export function openTokenTap(
  deps: { db: Db; log: Logger },
  tenantId: string,
  keys: Array<string | undefined>,
): TokenTap | undefined {
  const interest = liveInterestOf(deps);
  const session = interest && keys.find((k) => k !== undefined && interest.has(tenantId, k));
  if (!session) return undefined;
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

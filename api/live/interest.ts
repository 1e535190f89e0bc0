import type { Logger } from 'pino';
import type { Db } from '../../activities/store/db';
import { notifyLiveMany, type LiveNotice } from '../../activities/store/live';

/**
 * Which (tenant, session) pairs some WebSocket client, on any replica, is subscribed to. Fed by
 * the `sub` notices every replica sends on subscribe and re-sends every announce interval (so a
 * replica that starts, or missed notices, learns them); an entry not re-announced expires. The chat
 * path asks `has` (a Map lookup) and publishes nothing when nobody listens.
 */
export class LiveInterest {
  private readonly until = new Map<string, number>();

  has(tenantId: string, session: string): boolean {
    const k = `${tenantId}\u0000${session}`;
    const t = this.until.get(k);
    if (t === undefined) return false;
    if (t >= Date.now()) return true;
    this.until.delete(k);
    return false;
  }

  add(tenantId: string, session: string, ttlMs: number): void {
    this.until.set(`${tenantId}\u0000${session}`, Date.now() + ttlMs);
  }

  get size(): number {
    return this.until.size;
  }
}

const registries = new WeakMap<object, LiveInterest>();

/** The interest registry of the live socket attached for these deps (created by the socket). */
export function liveInterestOf(deps: object, create = false): LiveInterest | undefined {
  let r = registries.get(deps);
  if (!r && create) registries.set(deps, (r = new LiveInterest()));
  return r;
}

/** Room for the pairs of one `sub` notice under PostgreSQL's 8000-byte payload cap. */
const NOTICE_BYTES = 7000;

/**
 * Tells every replica which (tenant, session) pairs this replica's clients subscribed to: at once
 * on subscribe, again every `announceMs`, and when any replica asks (`sub_sync`, sent by a replica
 * whose LISTEN connection (re)connected and so may have missed notices).
 */
export function createAnnouncer(o: {
  db: Db;
  log: Logger;
  interest: LiveInterest;
  announceMs: number;
  pairs: () => Iterable<readonly [string, string]>;
}) {
  const ttl = o.announceMs * 3;
  const send = async (pairs: Iterable<readonly [string, string]>) => {
    const notices: LiveNotice[] = [];
    let subs: Array<readonly [string, string]> = [];
    let bytes = 0;
    for (const p of pairs) {
      const b = p[0].length + p[1].length + 8;
      if (bytes + b > NOTICE_BYTES) {
        notices.push({ kind: 'sub', ttl, subs, n: notices.length });
        subs = [];
        bytes = 0;
      }
      subs.push(p);
      bytes += b;
    }
    if (subs.length) notices.push({ kind: 'sub', ttl, subs, n: notices.length });
    await notifyLiveMany(o.db, notices);
  };
  const all = () => {
    const seen = new Map<string, readonly [string, string]>();
    for (const p of o.pairs()) seen.set(`${p[0]}\u0000${p[1]}`, p);
    return seen.values();
  };
  const announceAll = () =>
    void send(all()).catch((err: Error) => o.log.warn({ err: err.message }, 'live subscriptions not announced'));
  const timer = setInterval(announceAll, o.announceMs);
  timer.unref();
  return {
    /** Registers locally at once, and resolves when every replica has been told. */
    async subscribed(tenantId: string, session: string): Promise<void> {
      o.interest.add(tenantId, session, ttl);
      await send([[tenantId, session]]);
    },
    /** A `sub` or `sub_sync` notice from any replica (this one included). */
    onNotice(n: { kind?: string; ttl?: unknown; subs?: unknown }) {
      if (n.kind === 'sub_sync') return announceAll();
      if (!Array.isArray(n.subs) || typeof n.ttl !== 'number') return;
      for (const p of n.subs)
        if (Array.isArray(p) && typeof p[0] === 'string' && typeof p[1] === 'string')
          o.interest.add(p[0], p[1], Math.min(n.ttl, 600_000));
    },
    /** After this replica's LISTEN (re)connects: ask every replica for its subscriptions. */
    resync() {
      void notifyLiveMany(o.db, [{ kind: 'sub_sync', at: Date.now() }]).catch(() => undefined);
    },
    close() {
      clearInterval(timer);
    },
  };
}

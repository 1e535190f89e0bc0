import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { Db } from '../../activities/store/db';
import type { GatewayListener } from '../../activities/store/gateway-listener';
import type { KeyPrincipal } from '../../activities/store/keys';
import { addCounters, getLimits, type CounterDelta, type Limits } from '../../activities/store/rate-limits';

type Win = CounterDelta['win'];

interface Counter {
  tenantId: string;
  scope: string;
  win: Win;
  start: number;
  end: number;
  /** Shared totals as of the last sync (our own flushed deltas included). */
  requests: number;
  tokens: number;
  /** Ours, not yet flushed. */
  pendingRequests: number;
  pendingTokens: number;
  /** Ours, being written by a sync now: counted until its answer (which includes them) is in. */
  flushingRequests: number;
  flushingTokens: number;
  loaded: boolean;
  lastUse: number;
}

export interface Decision {
  ok: boolean;
  /** x-ratelimit-* headers (only for dimensions that have a limit). */
  headers: Record<string, string>;
  retryAfterS?: number;
  /** Which limit refused the request (for the error message). */
  reason?: string;
  counters: Counter[];
}

export interface Windows {
  minuteMs: number;
  dayMs: number;
}

/** OpenAI's reset format: "20ms", "1s", "6m0s". */
export function resetText(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.ceil(ms))}ms`;
  const s = Math.ceil(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${s % 60}s`;
}

const DAY = 86_400_000;

/**
 * Rate limits and budgets shared by every replica through PostgreSQL. Each replica admits
 * against the shared totals it last read plus its own unflushed counts, and every `syncMs`
 * adds its deltas and reads the new totals in one statement (see docs/decisions.md for the
 * error bound). Keys without limits cost no database work after their limits are cached.
 */
export class Limiter {
  private readonly limits = new LRUCache<string, { tenantId: string; key?: Limits; tenant?: Limits }>({
    max: 10_000,
    ttl: 5 * 60_000,
    // lru-cache re-reads the clock through a timer of this period: per request at the default 1 ms.
    ttlResolution: 1000,
  });
  private readonly counters = new Map<string, Counter>();
  private generation = 0;

  constructor(
    private readonly db: Db,
    private readonly listener: GatewayListener,
    private readonly log: Logger,
    private readonly windows: Windows,
    private readonly now: () => number = Date.now,
  ) {}

  private bounds(win: Win, now: number): [number, number] {
    const len = win === 'minute' ? this.windows.minuteMs : this.windows.dayMs;
    if (win === 'month') {
      if (this.windows.dayMs === DAY) {
        const d = new Date(now);
        return [Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1), Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)];
      }
      const m = 30 * this.windows.dayMs; // scaled windows (tests): a month is 30 scaled days
      return [Math.floor(now / m) * m, Math.floor(now / m) * m + m];
    }
    const start = Math.floor(now / len) * len;
    return [start, start + len];
  }

  async limitsOf(p: Pick<KeyPrincipal, 'tenantId' | 'keyId'>): Promise<{ key?: Limits; tenant?: Limits }> {
    this.listener.touch();
    const k = `${p.tenantId}\u0000${p.keyId}`;
    const hit = this.listener.connected ? this.limits.get(k) : undefined;
    if (hit) return hit;
    const gen = this.generation;
    const l = await getLimits(this.db, p.tenantId, p.keyId);
    if (this.listener.connected && gen === this.generation) this.limits.set(k, { tenantId: p.tenantId, ...l });
    return l;
  }

  invalidateTenant(tenantId: string): void {
    this.generation++;
    for (const [k, e] of this.limits.entries()) if (e.tenantId === tenantId) this.limits.delete(k);
  }

  reset(): void {
    this.generation++;
    this.limits.clear();
  }

  private counter(tenantId: string, scope: string, win: Win, now: number): Counter {
    const [start, end] = this.bounds(win, now);
    const id = `${tenantId}\u0000${scope}\u0000${win}\u0000${start}`;
    let c = this.counters.get(id);
    if (!c)
      this.counters.set(
        id,
        (c = {
          tenantId,
          scope,
          win,
          start,
          end,
          requests: 0,
          tokens: 0,
          pendingRequests: 0,
          pendingTokens: 0,
          flushingRequests: 0,
          flushingTokens: 0,
          loaded: false,
          lastUse: now,
        }),
      );
    c.lastUse = now;
    return c;
  }

  /** Admits (and counts) one request, or refuses it with the limit that is spent. */
  async admit(p: KeyPrincipal): Promise<Decision> {
    const l = await this.limitsOf(p);
    if (!l.key && !l.tenant) return { ok: true, headers: {}, counters: [] };
    const now = this.now();
    const checks: Array<{ c: Counter; field: keyof Limits; limit: number; what: 'requests' | 'tokens' }> = [];
    for (const [scope, lim] of [
      [p.keyId, l.key],
      ['', l.tenant],
    ] as const) {
      if (!lim) continue;
      const minute =
        lim.requests_per_minute || lim.tokens_per_minute ? this.counter(p.tenantId, scope, 'minute', now) : undefined;
      if (minute && lim.requests_per_minute)
        checks.push({ c: minute, field: 'requests_per_minute', limit: lim.requests_per_minute, what: 'requests' });
      if (minute && lim.tokens_per_minute)
        checks.push({ c: minute, field: 'tokens_per_minute', limit: lim.tokens_per_minute, what: 'tokens' });
      if (lim.tokens_per_day)
        checks.push({
          c: this.counter(p.tenantId, scope, 'day', now),
          field: 'tokens_per_day',
          limit: lim.tokens_per_day,
          what: 'tokens',
        });
      if (lim.tokens_per_month)
        checks.push({
          c: this.counter(p.tenantId, scope, 'month', now),
          field: 'tokens_per_month',
          limit: lim.tokens_per_month,
          what: 'tokens',
        });
    }
    const counters = [...new Set(checks.map((x) => x.c))];
    const unloaded = counters.filter((c) => !c.loaded);
    if (unloaded.length) await this.sync(unloaded);

    const headers: Record<string, string> = {};
    let refused: (typeof checks)[number] | undefined;
    const tightest: Record<'requests' | 'tokens', { limit: number; remaining: number; resetMs: number } | undefined> = {
      requests: undefined,
      tokens: undefined,
    };
    for (const x of checks) {
      const used =
        x.what === 'requests'
          ? x.c.requests + x.c.pendingRequests + x.c.flushingRequests
          : x.c.tokens + x.c.pendingTokens + x.c.flushingTokens;
      if (used >= x.limit && (!refused || x.c.end > refused.c.end)) refused = x;
      if (x.field === 'requests_per_minute' || x.field === 'tokens_per_minute') {
        const remaining = Math.max(0, x.limit - used - (x.what === 'requests' ? 1 : 0));
        const t = tightest[x.what];
        if (!t || remaining < t.remaining) tightest[x.what] = { limit: x.limit, remaining, resetMs: x.c.end - now };
      }
    }
    for (const what of ['requests', 'tokens'] as const) {
      const t = tightest[what];
      if (!t) continue;
      headers[`x-ratelimit-limit-${what}`] = String(t.limit);
      headers[`x-ratelimit-remaining-${what}`] = String(refused && what === 'requests' ? 0 : t.remaining);
      headers[`x-ratelimit-reset-${what}`] = resetText(t.resetMs);
    }
    if (refused) {
      return {
        ok: false,
        headers,
        retryAfterS: Math.max(1, Math.ceil((refused.c.end - now) / 1000)),
        reason: refused.field,
        counters: [],
      };
    }
    for (const c of counters) if (c.win === 'minute') c.pendingRequests++;
    return { ok: true, headers, counters };
  }

  /** Adds the tokens an admitted request used. */
  addTokens(d: Decision, tokens: number): void {
    for (const c of d.counters) c.pendingTokens += tokens;
  }

  /** Adds pending deltas and reads shared totals for the given (default: all live) counters. */
  async sync(only?: Counter[]): Promise<void> {
    const now = this.now();
    if (!only) {
      for (const [id, c] of this.counters)
        if (c.end <= now && !c.pendingRequests && !c.pendingTokens) this.counters.delete(id);
    }
    const list =
      only ??
      [...this.counters.values()].filter(
        (c) => c.pendingRequests || c.pendingTokens || (c.end > now && now - c.lastUse < 60_000),
      );
    if (!list.length) return;
    const taken = list.map((c) => [c.pendingRequests, c.pendingTokens] as const);
    list.forEach((c, i) => {
      c.pendingRequests = 0;
      c.pendingTokens = 0;
      c.flushingRequests += taken[i][0];
      c.flushingTokens += taken[i][1];
    });
    const settle = () =>
      list.forEach((c, i) => {
        c.flushingRequests -= taken[i][0];
        c.flushingTokens -= taken[i][1];
      });
    try {
      const rows = await addCounters(
        this.db,
        list.map((c, i) => ({
          tenantId: c.tenantId,
          scope: c.scope,
          win: c.win,
          windowStart: c.start,
          requests: taken[i][0],
          tokens: taken[i][1],
        })),
      );
      const byId = new Map(rows.map((r) => [`${r.tenant_id}\u0000${r.scope}\u0000${r.win}\u0000${r.window_start}`, r]));
      for (const c of list) {
        const r = byId.get(`${c.tenantId}\u0000${c.scope}\u0000${c.win}\u0000${c.start}`);
        // Totals only grow within a window: an answer of an earlier, slower sync must not lower them.
        if (r)
          Object.assign(c, {
            requests: Math.max(c.requests, r.requests),
            tokens: Math.max(c.tokens, r.tokens),
            loaded: true,
          });
      }
      settle();
    } catch (err) {
      settle();
      // Keep the counts for the next sync; admission goes on against what we know.
      list.forEach((c, i) => ((c.pendingRequests += taken[i][0]), (c.pendingTokens += taken[i][1])));
      this.log.warn({ err: (err as Error).message }, 'rate counter sync failed');
      if (only) throw err;
    }
  }
}

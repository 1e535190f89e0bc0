import type { Logger } from 'pino';
import type { Db } from '../../activities/store/db';
import { addUsage, type UsageDelta } from '../../activities/store/rate-limits';

let dayCache = { from: 0, to: 0, day: '' };

/** The UTC date (YYYY-MM-DD) of `now`, formatted once per day rather than per request. */
function utcDay(now: number): string {
  if (now < dayCache.from || now >= dayCache.to) {
    const from = now - (now % 86_400_000);
    dayCache = { from, to: from + 86_400_000, day: new Date(from).toISOString().slice(0, 10) };
  }
  return dayCache.day;
}

/**
 * Per-request usage (requests, errors, tokens) summed in memory per tenant, key, lane and UTC
 * day, and written in one statement per flush: the request path only updates a Map entry.
 */
export class UsageRecorder {
  private pending = new Map<string, UsageDelta>();

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
  ) {}

  record(o: {
    tenantId: string;
    keyId: string;
    lane: string;
    error: boolean;
    tokensIn: number;
    tokensOut: number;
    estimated: boolean;
  }): void {
    const day = utcDay(Date.now());
    const k = `${o.tenantId}\u0000${o.keyId}\u0000${o.lane}\u0000${day}`;
    let d = this.pending.get(k);
    if (!d)
      this.pending.set(
        k,
        (d = {
          tenantId: o.tenantId,
          keyId: o.keyId,
          lane: o.lane,
          day,
          requests: 0,
          errors: 0,
          tokensIn: 0,
          tokensOut: 0,
          estimated: 0,
        }),
      );
    d.requests++;
    if (o.error) d.errors++;
    d.tokensIn += o.tokensIn;
    d.tokensOut += o.tokensOut;
    if (o.estimated) d.estimated++;
  }

  async flush(): Promise<void> {
    if (!this.pending.size) return;
    const batch = [...this.pending.values()];
    this.pending = new Map();
    try {
      await addUsage(this.db, batch);
    } catch (err) {
      // Put the counts back so the next flush writes them.
      for (const d of batch) {
        const k = `${d.tenantId}\u0000${d.keyId}\u0000${d.lane}\u0000${d.day}`;
        const cur = this.pending.get(k);
        if (!cur) this.pending.set(k, d);
        else for (const f of ['requests', 'errors', 'tokensIn', 'tokensOut', 'estimated'] as const) cur[f] += d[f];
      }
      this.log.warn({ err: (err as Error).message }, 'usage flush failed');
    }
  }
}

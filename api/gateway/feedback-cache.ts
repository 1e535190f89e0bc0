import { LRUCache } from 'lru-cache';
import type { Db } from '../../activities/store/db';
import { feedbackSignal } from '../../activities/store/feedback';
import type { GatewayListener } from '../../activities/store/gateway-listener';

type Signal = Awaited<ReturnType<typeof feedbackSignal>>;

/**
 * The feedback/persona signal per tenant + surface + profile, cached while the LISTEN
 * connection is up; new feedback of a tenant (a NOTIFY from the insert trigger, and at once in
 * the replica that stored it) drops that tenant's entries.
 */
export class FeedbackCache {
  private readonly cache = new LRUCache<string, { tenantId: string; signal: Signal | null }>({
    max: 10_000,
    ttl: 10 * 60_000,
  });
  private generation = 0;

  constructor(
    private readonly db: Db,
    private readonly listener: GatewayListener,
  ) {}

  async signal(opts: { tenantId: string; surface: string; profile?: string }): Promise<Signal> {
    this.listener.touch();
    const k = `${opts.tenantId}\u0000${opts.surface}\u0000${opts.profile ?? ''}`;
    if (this.listener.connected) {
      const hit = this.cache.get(k);
      if (hit) return hit.signal ?? undefined;
    }
    const gen = this.generation;
    const signal = await feedbackSignal(this.db, opts);
    if (this.listener.connected && gen === this.generation)
      this.cache.set(k, { tenantId: opts.tenantId, signal: signal ?? null });
    return signal;
  }

  invalidateTenant(tenantId: string): void {
    this.generation++;
    for (const [k, e] of this.cache.entries()) if (e.tenantId === tenantId) this.cache.delete(k);
  }

  reset(): void {
    this.generation++;
    this.cache.clear();
  }
}

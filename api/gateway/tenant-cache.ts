import { LRUCache } from 'lru-cache';
import type { GatewayListener } from '../../activities/store/gateway-listener';

/**
 * Values loaded from PostgreSQL per key and owned by one tenant, answered from memory only while
 * the LISTEN connection is up (a change announced by NOTIFY drops the tenant's entries; without
 * the connection a notice could be missed, so every call reads the database then).
 */
export class TenantCache<V> {
  private readonly cache: LRUCache<string, { tenantId: string; value: V }>;
  private generation = 0;

  constructor(
    private readonly listener: GatewayListener,
    opts: { max: number; ttlMs: number },
  ) {
    // ttlResolution: lru-cache re-reads the clock through a timer of this period (at the default 1 ms,
    // a timer per request); the TTL (minutes) is a safety net, a second more does not matter.
    this.cache = new LRUCache({ max: opts.max, ttl: opts.ttlMs, ttlResolution: 1000 });
  }

  async get(tenantId: string, key: string, load: () => Promise<V>): Promise<V> {
    this.listener.touch();
    const k = `${tenantId}\u0000${key}`;
    if (this.listener.connected) {
      const hit = this.cache.get(k);
      if (hit) return hit.value;
    }
    // A notice that arrives while we read makes this value stale: then it is not kept.
    const gen = this.generation;
    const value = await load();
    if (this.listener.connected && gen === this.generation) this.cache.set(k, { tenantId, value });
    return value;
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

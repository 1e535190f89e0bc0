import { LRUCache } from 'lru-cache';
import type { Db } from '../../activities/store/db';
import { authenticateKey, hashSecret, markKeyUsed, type KeyPrincipal } from '../../activities/store/keys';
import type { GatewayListener } from '../../activities/store/gateway-listener';

interface Entry {
  principal: KeyPrincipal;
  markedAt: number;
}

const MARK_EVERY_MS = 60_000;

/**
 * Key authentication from a bounded in-process cache. Entries are served only while the
 * gateway's LISTEN connection is up (a revocation anywhere arrives as a NOTIFY within
 * milliseconds and drops the key's entries); a lookup that raced with an invalidation is not
 * cached (generation check). The TTL is a safety net, not the revocation path.
 */
export class KeyCache {
  private readonly cache: LRUCache<string, Entry>;
  private generation = 0;

  constructor(
    private readonly db: Db,
    private readonly listener: GatewayListener,
    opts: { max?: number; ttlMs?: number } = {},
  ) {
    // ttlResolution: lru-cache re-reads the clock through a timer of this period (at the default 1 ms,
    // a timer per request); the TTL is a safety net, a second more does not matter.
    this.cache = new LRUCache({ max: opts.max ?? 10_000, ttl: opts.ttlMs ?? 5 * 60_000, ttlResolution: 1000 });
  }

  /** The principal behind `token`, or null (unknown, malformed or revoked). */
  async authenticate(token: string): Promise<KeyPrincipal | null> {
    this.listener.touch();
    // Keyed by the token's hash: the cache never holds a secret in clear.
    const h = hashSecret(token);
    if (this.listener.connected) {
      const hit = this.cache.get(h);
      if (hit) {
        const now = Date.now();
        if (now - hit.markedAt > MARK_EVERY_MS) {
          hit.markedAt = now;
          markKeyUsed(this.db, hit.principal.keyId).catch(() => undefined);
        }
        return hit.principal;
      }
    }
    const gen = this.generation;
    const principal = await authenticateKey(this.db, token);
    if (principal && this.listener.connected && gen === this.generation)
      this.cache.set(h, { principal, markedAt: Date.now() });
    return principal;
  }

  /** Drops every entry of the key (revoked or changed). */
  invalidateKey(keyId: string): void {
    this.generation++;
    for (const [h, e] of this.cache.entries()) if (e.principal.keyId === keyId) this.cache.delete(h);
  }

  reset(): void {
    this.generation++;
    this.cache.clear();
  }
}

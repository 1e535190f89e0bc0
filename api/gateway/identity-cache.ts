import type { Db } from '../../activities/store/db';
import type { GatewayListener } from '../../activities/store/gateway-listener';
import { getIdentity } from '../../activities/store/identity';
import { TenantCache } from './tenant-cache';

type Identity = Awaited<ReturnType<typeof getIdentity>>;

/**
 * The tenant's saved profile (PUT /v1/sovereign/identity), which every chat reads, cached while
 * the LISTEN connection is up; a change (NOTIFY from the table's trigger, and at once in the
 * replica that made it) drops it.
 */
export class IdentityCache extends TenantCache<Identity> {
  constructor(
    private readonly db: Db,
    listener: GatewayListener,
  ) {
    super(listener, { max: 10_000, ttlMs: 10 * 60_000 });
  }

  of(tenantId: string): Promise<Identity> {
    return this.get(tenantId, '', () => getIdentity(this.db, tenantId));
  }
}

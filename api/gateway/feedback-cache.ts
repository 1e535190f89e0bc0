import type { Db } from '../../activities/store/db';
import { feedbackSignal } from '../../activities/store/feedback';
import type { GatewayListener } from '../../activities/store/gateway-listener';
import { TenantCache } from './tenant-cache';

type Signal = Awaited<ReturnType<typeof feedbackSignal>>;

/**
 * The feedback/persona signal per tenant + surface + profile, cached while the LISTEN
 * connection is up; new feedback of a tenant (a NOTIFY from the insert trigger, and at once in
 * the replica that stored it) drops that tenant's entries.
 */
export class FeedbackCache extends TenantCache<Signal> {
  constructor(
    private readonly db: Db,
    listener: GatewayListener,
  ) {
    super(listener, { max: 10_000, ttlMs: 10 * 60_000 });
  }

  signal(opts: { tenantId: string; surface: string; profile?: string }): Promise<Signal> {
    return this.get(opts.tenantId, `${opts.surface}\u0000${opts.profile ?? ''}`, () => feedbackSignal(this.db, opts));
  }
}

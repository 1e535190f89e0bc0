import { revokeKey } from '../../activities/store/keys';
import { usageReport } from '../../activities/store/rate-limits';
import { invalid } from '../../schema/errors';
import { KeyRevoked, UsageQuery, UsageReport } from '../../schema/gateway';
import { principalOf, type AppContext } from '../context';
import { gatewayOf } from '../gateway';
import { defineRoute, type RouteSpec } from '../route';

const DAY_MS = 86_400_000;

/** Usage report of the tenant, and self-revocation of a key. */
export function usageRoutes(): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/usage',
      access: 'key',
      summary:
        "The tenant's model usage (requests, errors, tokens in and out) per key, lane or UTC day; from/to are inclusive days (default: the last 30 days).",
      tags: ['keys'],
      query: UsageQuery,
      response: UsageReport,
      handler: async (ctx: AppContext, { query }) => {
        const p = principalOf(ctx);
        // Counts still in this replica's batch are written first, so a report right after a call sees it.
        await gatewayOf(ctx.deps).flush();
        const to = query.to ?? new Date().toISOString().slice(0, 10);
        const from = query.from ?? new Date(Date.parse(to) - 29 * DAY_MS).toISOString().slice(0, 10);
        if (from > to) throw invalid([{ path: 'query.from', message: 'must not be after to' }]);
        const data = await usageReport(ctx.deps.db, { tenantId: p.tenantId, from, to, groupBy: query.group_by });
        return { object: 'usage' as const, from, to, group_by: query.group_by, data };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/key',
      access: 'key',
      summary:
        'Revoke the calling key: refused at once here and within a second on every replica; jobs it started are cancelled (key_revoked).',
      tags: ['keys'],
      response: KeyRevoked,
      handler: async (ctx: AppContext) => {
        const p = principalOf(ctx);
        await revokeKey(ctx.deps.db, p.keyId);
        gatewayOf(ctx.deps).keyChanged(p.keyId);
        return { key_id: p.keyId, revoked: true as const };
      },
    }),
  ];
}

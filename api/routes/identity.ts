import { getIdentity, putIdentity } from '../../activities/store/identity';
import { PERSONA_NAME } from '../../reasoning/persona';
import { IdentityProfile, IdentityResponse } from '../../schema/identity';
import { principalOf, type AppContext } from '../context';
import { gatewayOf } from '../gateway';
import { defineRoute, type RouteSpec } from '../route';

/** GET/PUT /v1/sovereign/identity: the tenant's active profile; chat applies it (see api/routes/chat-plan.ts). */
export function identityRoutes(): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/sovereign/identity',
      access: 'key',
      summary:
        "The tenant's active profile (name, tone, working style per surface) within the persona's fixed identity.",
      tags: ['identity'],
      response: IdentityResponse,
      handler: async (ctx: AppContext) => {
        const r = await getIdentity(ctx.deps.db, principalOf(ctx).tenantId);
        return { persona: PERSONA_NAME, profile: r.profile, updated_at: r.updatedAt };
      },
    }),
    defineRoute({
      method: 'put',
      path: '/v1/sovereign/identity',
      access: 'key',
      summary: "Replace the tenant's active profile (validated: working styles must belong to their surface).",
      tags: ['identity'],
      body: IdentityProfile,
      response: IdentityResponse,
      example: {
        name: 'Studio buddy',
        tone: 'warm',
        surface_overrides: { studio: { working_style: 'muse' }, dev: { tone: 'direct' } },
      },
      handler: async (ctx: AppContext, { body }) => {
        const tenantId = principalOf(ctx).tenantId;
        const r = await putIdentity(ctx.deps.db, tenantId, body);
        // This replica's chats see the new profile at once; the others drop it on the NOTIFY.
        gatewayOf(ctx.deps).identity.invalidateTenant(tenantId);
        return { persona: PERSONA_NAME, profile: body, updated_at: r.updatedAt };
      },
    }),
  ];
}

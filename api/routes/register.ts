import { createTenant, mintKey, tenantExists } from '../../activities/store/keys';
import {
  AgentRegisterBody,
  APP_SCOPES,
  KeyInfo,
  MintedKey,
  normalizeAppName,
  RegisterAppBody,
} from '../../schema/auth';
import { AppError } from '../../schema/errors';
import { KeyLimits } from '../../schema/gateway';
import { principalOf, type AppContext } from '../context';
import { gatewayOf } from '../gateway';
import { defineRoute, type RouteSpec } from '../route';

/** Non-first-party apps minted through a bootstrap key get the base runtime scopes. */
const DEFAULT_APP_SCOPES = ['runtime:chat', 'runtime:models'];

/** The scopes of a first-party app; own keys only, so `constructor` or `__proto__` are not apps. */
function firstPartyScopes(app: string): string[] | undefined {
  return Object.hasOwn(APP_SCOPES, app) ? APP_SCOPES[app] : undefined;
}

export function registerRoutes(): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/app/register',
      access: 'token',
      summary: 'Mint a product-scoped runtime key for a first-party app (registration token required).',
      tags: ['keys'],
      body: RegisterAppBody,
      response: MintedKey,
      responses: { 403: 'Not an approved first-party app.', 404: 'The given tenant does not exist.' },
      example: { app_name: 'home', device_id: 'pixel-8-a1' },
      handler: async (ctx: AppContext, { body }) => {
        const app = normalizeAppName(body.app_name);
        const scopes = firstPartyScopes(app);
        if (!scopes) {
          throw new AppError(
            'forbidden',
            `App "${body.app_name}" is not an approved first-party app (home, studio, mobile, dev).`,
          );
        }
        const db = ctx.deps.db;
        let tenantId = body.tenant;
        if (tenantId !== undefined) {
          if (!(await tenantExists(db, tenantId))) throw new AppError('not_found', `Tenant ${tenantId} not found.`);
        } else {
          tenantId = await createTenant(db, { name: app });
        }
        const key = await mintKey(db, {
          tenantId,
          kind: 'runtime',
          scopes,
          app,
          deviceId: body.device_id,
          name: `${app} app`,
        });
        return { api_key: key.apiKey, key_id: key.keyId, tenant_id: key.tenantId, app, scopes: key.scopes };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/agent/register',
      access: 'bootstrap',
      summary: 'Mint an app key with a bootstrap key whose scope names that app.',
      tags: ['keys'],
      body: AgentRegisterBody,
      response: MintedKey,
      responses: { 403: 'The bootstrap key has no bootstrap:app:<name> scope for this app.' },
      example: { app_name: 'studio', device_id: 'build-agent-7' },
      handler: async (ctx: AppContext, { body }) => {
        const principal = principalOf(ctx);
        const app = normalizeAppName(body.app_name);
        const needed = `bootstrap:app:${app}`;
        if (!app || !principal.scopes.includes(needed)) {
          throw new AppError('forbidden', `This bootstrap key may not mint keys for app "${body.app_name}".`, {
            scope: needed,
          });
        }
        const scopes = firstPartyScopes(app) ?? DEFAULT_APP_SCOPES;
        const key = await mintKey(ctx.deps.db, {
          tenantId: principal.tenantId,
          kind: 'runtime',
          scopes,
          app,
          deviceId: body.device_id,
          name: `${app} app (via ${principal.keyId})`,
        });
        return { api_key: key.apiKey, key_id: key.keyId, tenant_id: key.tenantId, app, scopes: key.scopes };
      },
    }),
  ];
}

/** Who am I: the calling key's id, tenant, kind and scopes (never the secret). */
export function keyInfoRoute(): RouteSpec {
  return defineRoute({
    method: 'get',
    path: '/v1/key',
    access: 'key',
    summary: 'Describe the calling key: id, tenant, kind, app, scopes, and the rate limits of the key and its tenant.',
    tags: ['keys'],
    response: KeyInfo.extend({ limits: KeyLimits }),
    handler: async (ctx: AppContext) => {
      const p = principalOf(ctx);
      const limits = await gatewayOf(ctx.deps).limiter.limitsOf(p);
      return {
        key_id: p.keyId,
        tenant_id: p.tenantId,
        kind: p.kind,
        app: p.app,
        scopes: p.scopes,
        limits: { key: limits.key ?? null, tenant: limits.tenant ?? null },
      };
    },
  });
}

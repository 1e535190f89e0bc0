import { createHash, timingSafeEqual } from 'node:crypto';
import { AppError } from '../../schema/errors';
import { parseSurface } from '../../schema/surfaces';
import type { AppContext, AppMiddleware } from '../context';
import { gatewayOf } from '../gateway';
import type { Access } from '../route';

function bearer(ctx: AppContext): string | undefined {
  const h = ctx.get('Authorization');
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? m[1] : undefined;
}

function sameSecret(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}

/**
 * The one auth middleware. Every route gets it with the access its spec declares, so the
 * route table is also the scope table (see `api/routes/index.ts` and the OpenAPI document).
 */
export function authorize(access: Access): AppMiddleware {
  return async (ctx: AppContext, next) => {
    ctx.state.surface = parseSurface(ctx.get('X-Svc-Context') || undefined);
    if (access === 'public') return next();

    if (access === 'token') {
      const expected = ctx.deps.config.registrationToken;
      const given = ctx.get('X-Registration-Token') || bearer(ctx);
      if (!expected)
        throw new AppError(
          'unauthorized',
          'App registration is disabled: no registration token is configured on this server.',
        );
      if (!given) throw new AppError('unauthorized', 'Missing registration token (header X-Registration-Token).');
      if (!sameSecret(given, expected)) throw new AppError('unauthorized', 'Invalid registration token.');
      return next();
    }

    const token = bearer(ctx);
    const wantsBootstrap = access === 'bootstrap';
    if (!token) {
      throw new AppError(
        'unauthorized',
        `Missing ${wantsBootstrap ? 'bootstrap ' : ''}key: send Authorization: Bearer <key>.`,
      );
    }
    const principal = await gatewayOf(ctx.deps).keys.authenticate(token);
    if (!principal) throw new AppError('unauthorized', `Invalid or revoked ${wantsBootstrap ? 'bootstrap ' : ''}key.`);
    if (wantsBootstrap) {
      if (principal.kind !== 'bootstrap')
        throw new AppError('unauthorized', 'This endpoint needs a bootstrap key (agb.<prefix>.<secret>).');
      ctx.state.principal = principal;
      return next();
    }
    ctx.state.principal = principal;
    const scope = typeof access === 'object' ? access.scope : undefined;
    if (principal.kind === 'bootstrap') {
      throw new AppError('forbidden', 'Bootstrap keys can only mint app keys through POST /v1/agent/register.', {
        scope,
      });
    }
    if (scope && !principal.scopes.includes(scope)) {
      throw new AppError('forbidden', `This key lacks the scope ${scope}.`, { scope });
    }
    return next();
  };
}

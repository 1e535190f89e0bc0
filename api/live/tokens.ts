import type { Logger } from 'pino';
import { tokenStream, type TokenTap } from '../../activities/live/token-stream';
import type { Db } from '../../activities/store/db';
import { liveInterestOf } from './interest';

export type { TokenTap };

/**
 * A tap for one generation (`tokenStream`), or undefined when no client on any replica subscribed to it (the chat path
 * then pays nothing).
 */
export function openTokenTap(
  deps: { db: Db; log: Logger },
  tenantId: string,
  keys: Array<string | undefined>,
): TokenTap | undefined {
  const interest = liveInterestOf(deps);
  const session = interest && keys.find((k) => k !== undefined && interest.has(tenantId, k));
  if (!session) return undefined;
  return tokenStream(deps, tenantId, session);
}

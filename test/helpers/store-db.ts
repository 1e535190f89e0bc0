import { createDb, type Db } from '../../activities/store/db';
import { createTenant } from '../../activities/store/keys';
import { freshDatabase } from './harness';

/**
 * A fresh database, a pool on it and one tenant for a test file's store-level tests (no app, no worker):
 * made before the file's tests (its own `beforeAll` hooks run after this one) and dropped after them.
 * Read the fields inside hooks and tests, not at module level.
 */
export function useStoreDatabase(opts: { maxConnections?: number } = {}): {
  readonly url: string;
  readonly db: Db;
  readonly tenantId: string;
} {
  const state = {} as { url: string; db: Db; tenantId: string; drop?: () => Promise<void> };
  beforeAll(async () => {
    const database = await freshDatabase();
    state.url = database.url;
    state.drop = database.drop;
    state.db = await createDb({ url: database.url, maxConnections: opts.maxConnections ?? 4 });
    state.tenantId = await createTenant(state.db);
  }, 120_000);
  afterAll(async () => {
    await state.db?.end();
    await state.drop?.();
  });
  return state;
}

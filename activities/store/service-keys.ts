import { randomBytes } from 'node:crypto';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';

const cache = new WeakMap<DatabasePool, Map<string, Promise<Buffer>>>();

/**
 * The service's own 32-byte key for `name`, made on first use (the first replica to ask inserts it; every other one
 * reads the same) and kept in memory after. A failed read is not cached.
 */
export function serviceKey(db: DatabasePool, name: string): Promise<Buffer> {
  let keys = cache.get(db);
  if (!keys) cache.set(db, (keys = new Map()));
  let key = keys.get(name);
  if (!key) {
    key = (async () => {
      await db.query(sql.unsafe`
        INSERT INTO service_keys (name, key) VALUES (${name}, ${sql.binary(randomBytes(32))}) ON CONFLICT (name) DO NOTHING`);
      return db.oneFirst(sql.type(z.object({ key: z.instanceof(Buffer) }))`
        SELECT key FROM service_keys WHERE name = ${name}`);
    })();
    keys.set(name, key);
    key.catch(() => keys.delete(name));
  }
  return key;
}

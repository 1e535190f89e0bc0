import { sql } from 'slonik';
import type { Db } from './db';

/** Stores a waitlist entry; a duplicate email (any case) is kept once. */
export async function addToWaitlist(db: Db, entry: { email?: string; name?: string }): Promise<{ duplicate: boolean }> {
  const r = await db.query(sql.unsafe`
    INSERT INTO waitlist (email, name) VALUES (${entry.email ?? null}, ${entry.name ?? null})
    ON CONFLICT DO NOTHING`);
  return { duplicate: r.rowCount === 0 };
}

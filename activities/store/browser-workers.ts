import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

/*
 * Browser worker reports (GET /v1/daemons). Service-wide on purpose: a worker serves every tenant,
 * and a row holds only its id, Chromium version and counts, never a tenant's session.
 */

export const BrowserWorkerRow = z.object({
  worker_id: z.string(),
  chromium_version: z.string().nullable(),
  capacity: z.number(),
  sessions_open: z.number(),
  started_at: z.string(),
  seen_at: z.string(),
  age_s: z.number(),
});
export type BrowserWorkerRow = z.infer<typeof BrowserWorkerRow>;

export async function reportBrowserWorker(
  db: CommonQueryMethods,
  w: {
    workerId: string;
    chromiumVersion: string | null;
    capacity: number;
    sessionsOpen: number;
    endpoint?: string | null;
    token?: string | null;
  },
): Promise<void> {
  await db.query(sql.unsafe`
    INSERT INTO browser_workers (worker_id, chromium_version, capacity, sessions_open, endpoint, token)
    VALUES (${w.workerId}, ${w.chromiumVersion}, ${w.capacity}, ${w.sessionsOpen}, ${w.endpoint ?? null}, ${w.token ?? null})
    ON CONFLICT (worker_id) DO UPDATE SET chromium_version = EXCLUDED.chromium_version,
      capacity = EXCLUDED.capacity, sessions_open = EXCLUDED.sessions_open, endpoint = EXCLUDED.endpoint,
      token = EXCLUDED.token, seen_at = now()`);
}

/** The command endpoint of a worker (direct commands), or null when it has none or never reported. */
export async function browserWorkerEndpoint(
  db: CommonQueryMethods,
  workerId: string,
): Promise<{ endpoint: string; token: string } | null> {
  const row = await db.maybeOne(sql.type(z.object({ endpoint: z.string().nullable(), token: z.string().nullable() }))`
    SELECT endpoint, token FROM browser_workers WHERE worker_id = ${workerId}`);
  return row?.endpoint && row.token ? { endpoint: row.endpoint, token: row.token } : null;
}

export async function removeBrowserWorker(db: CommonQueryMethods, workerId: string): Promise<void> {
  await db.query(sql.unsafe`DELETE FROM browser_workers WHERE worker_id = ${workerId}`);
}

/** Workers seen within `withinS` seconds (older rows are of workers killed long ago), newest first. */
export async function listBrowserWorkers(db: CommonQueryMethods, withinS: number): Promise<BrowserWorkerRow[]> {
  const rows = await db.any(sql.type(BrowserWorkerRow)`
    SELECT worker_id, chromium_version, capacity, sessions_open, started_at, seen_at,
           extract(epoch FROM now() - seen_at)::float8 AS age_s
      FROM browser_workers WHERE seen_at > now() - make_interval(secs => ${withinS})
     ORDER BY seen_at DESC LIMIT 100`);
  return [...rows];
}

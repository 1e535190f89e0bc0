import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

export const BROWSER_LIVE = ['opening', 'open', 'recovering'] as const;
export type BrowserStatus = 'opening' | 'open' | 'recovering' | 'closed' | 'expired' | 'failed';

export const BrowserSessionRow = z.object({
  id: z.string(),
  tenant_id: z.string(),
  status: z.enum(['opening', 'open', 'recovering', 'closed', 'expired', 'failed']),
  url: z.string().nullable(),
  title: z.string().nullable(),
  worker_id: z.string().nullable(),
  options: z.record(z.string(), z.unknown()),
  idle_timeout_s: z.number(),
  expires_at: z.string().nullable(),
  checkpoint_at: z.string().nullable(),
  error: z.string().nullable(),
  recoveries: z.number(),
  created_at: z.string(),
  updated_at: z.string(),
  closed_at: z.string().nullable(),
});
export type BrowserSessionRow = z.infer<typeof BrowserSessionRow>;

const COLS = sql.fragment`id, tenant_id, status, url, title, worker_id, options, idle_timeout_s, expires_at, checkpoint_at,
  error, recoveries, created_at, updated_at, closed_at`;

/**
 * Inserts an `opening` session unless the tenant already holds `cap` live sessions (checked under a
 * per-tenant advisory lock, so concurrent creates cannot both slip under the cap).
 * @returns the row, or null when the cap is reached
 */
export async function insertBrowserSession(
  db: CommonQueryMethods,
  s: { id: string; tenantId: string; options: Record<string, unknown>; idleTimeoutS: number; cap: number },
): Promise<BrowserSessionRow | null> {
  return db.transaction(async (tx) => {
    await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(hashtext(${'browser:' + s.tenantId}))`);
    const live = await tx.oneFirst(sql.type(z.object({ n: z.number() }))`
      SELECT count(*)::int AS n FROM browser_sessions WHERE tenant_id = ${s.tenantId} AND status = ANY(${sql.array([...BROWSER_LIVE], 'text')})`);
    if (live >= s.cap) return null;
    return tx.one(sql.type(BrowserSessionRow)`
      INSERT INTO browser_sessions (id, tenant_id, status, options, idle_timeout_s, expires_at)
      VALUES (${s.id}, ${s.tenantId}, 'opening', ${sql.jsonb(s.options as never)}, ${s.idleTimeoutS}, now() + make_interval(secs => ${s.idleTimeoutS}))
      RETURNING ${COLS}`);
  });
}

export async function getBrowserSession(
  db: CommonQueryMethods,
  tenantId: string,
  id: string,
): Promise<BrowserSessionRow | null> {
  return db.maybeOne(
    sql.type(BrowserSessionRow)`SELECT ${COLS} FROM browser_sessions WHERE id = ${id} AND tenant_id = ${tenantId}`,
  );
}

export async function listBrowserSessions(
  db: CommonQueryMethods,
  o: { tenantId: string; live: boolean; limit: number; offset: number },
): Promise<readonly BrowserSessionRow[]> {
  const filter = o.live ? sql.fragment`AND status = ANY(${sql.array([...BROWSER_LIVE], 'text')})` : sql.fragment``;
  return db.any(sql.type(BrowserSessionRow)`
    SELECT ${COLS} FROM browser_sessions WHERE tenant_id = ${o.tenantId} ${filter}
    ORDER BY created_at DESC, id DESC LIMIT ${o.limit} OFFSET ${o.offset}`);
}

export async function countLiveBrowserSessions(db: CommonQueryMethods, tenantId: string): Promise<number> {
  return db.oneFirst(sql.type(z.object({ n: z.number() }))`
    SELECT count(*)::int AS n FROM browser_sessions WHERE tenant_id = ${tenantId} AND status = ANY(${sql.array([...BROWSER_LIVE], 'text')})`);
}

/** Status change written by the session workflow; a session that ended stays ended. */
export async function setBrowserStatus(
  db: CommonQueryMethods,
  s: {
    tenantId: string;
    id: string;
    status: BrowserStatus;
    workerId?: string | null;
    error?: string | null;
    recovered?: boolean;
  },
): Promise<void> {
  const ended = s.status === 'closed' || s.status === 'expired' || s.status === 'failed';
  await db.query(sql.unsafe`
    UPDATE browser_sessions SET status = ${s.status},
      worker_id = coalesce(${s.workerId ?? null}, worker_id),
      error = ${s.error ?? null},
      recoveries = recoveries + ${s.recovered ? 1 : 0},
      closed_at = ${ended ? sql.fragment`now()` : sql.fragment`NULL`},
      updated_at = now()
    WHERE id = ${s.id} AND tenant_id = ${s.tenantId} AND status NOT IN ('closed', 'expired', 'failed')`);
}

/** Checkpoint after a command: page URL and title, sealed storageState, new expiry. */
export async function saveBrowserCheckpoint(
  db: CommonQueryMethods,
  c: { tenantId: string; id: string; url: string; title: string; checkpoint?: string; expiresAt: number },
): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE browser_sessions SET url = ${c.url}, title = ${c.title},
      ${c.checkpoint !== undefined ? sql.fragment`checkpoint = ${c.checkpoint}, checkpoint_at = now(),` : sql.fragment``}
      expires_at = to_timestamp(${c.expiresAt / 1000}), updated_at = now()
    WHERE id = ${c.id} AND tenant_id = ${c.tenantId}`);
}

export async function getBrowserCheckpoint(
  db: CommonQueryMethods,
  tenantId: string,
  id: string,
): Promise<{ url: string | null; checkpoint: string | null } | null> {
  return db.maybeOne(sql.type(z.object({ url: z.string().nullable(), checkpoint: z.string().nullable() }))`
    SELECT url, checkpoint FROM browser_sessions WHERE id = ${id} AND tenant_id = ${tenantId}`);
}

export async function deleteBrowserSession(db: CommonQueryMethods, tenantId: string, id: string): Promise<void> {
  await db.query(sql.unsafe`DELETE FROM browser_sessions WHERE id = ${id} AND tenant_id = ${tenantId}`);
}

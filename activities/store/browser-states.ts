import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

export const BrowserStateRow = z.object({
  id: z.string(),
  tenant_id: z.string(),
  name: z.string(),
  encrypted: z.boolean(),
  origins: z.number(),
  cookies: z.number(),
  source_session_id: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type BrowserStateRow = z.infer<typeof BrowserStateRow>;

const COLS = sql.fragment`id, tenant_id, name, encrypted, origins, cookies, source_session_id, created_at, updated_at`;

/** Saves (or replaces, by name) a tenant's state; `state` is already sealed when encryption is on. */
export async function upsertBrowserState(
  db: CommonQueryMethods,
  s: {
    id: string;
    tenantId: string;
    name: string;
    state: string;
    encrypted: boolean;
    origins: number;
    cookies: number;
    sourceSessionId: string;
  },
): Promise<BrowserStateRow> {
  return db.one(sql.type(BrowserStateRow)`
    INSERT INTO browser_states (id, tenant_id, name, state, encrypted, origins, cookies, source_session_id)
    VALUES (${s.id}, ${s.tenantId}, ${s.name}, ${s.state}, ${s.encrypted}, ${s.origins}, ${s.cookies}, ${s.sourceSessionId})
    ON CONFLICT (tenant_id, name) DO UPDATE SET state = EXCLUDED.state, encrypted = EXCLUDED.encrypted,
      origins = EXCLUDED.origins, cookies = EXCLUDED.cookies, source_session_id = EXCLUDED.source_session_id, updated_at = now()
    RETURNING ${COLS}`);
}

/** A tenant's state by id or by name, with its stored (possibly sealed) text. */
export async function getBrowserState(
  db: CommonQueryMethods,
  tenantId: string,
  ref: { id?: string; name?: string },
): Promise<(BrowserStateRow & { state: string }) | null> {
  const where = ref.id ? sql.fragment`id = ${ref.id}` : sql.fragment`name = ${ref.name ?? ''}`;
  return db.maybeOne(sql.type(BrowserStateRow.extend({ state: z.string() }))`
    SELECT ${COLS}, state FROM browser_states WHERE tenant_id = ${tenantId} AND ${where}`);
}

import { sql } from 'slonik';
import { z } from 'zod';
import type { SpaceRecord } from '../../schema/spaces';
import type { Db } from './db';
import { newId } from './ids';

const SpaceRow = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  document_count: z.number(),
  created_at: z.string(),
  updated_at: z.string(),
});

const COLUMNS = sql.fragment`s.id, s.name, s.description,
  (SELECT count(*)::int FROM documents d WHERE d.space_id = s.id) AS document_count, s.created_at, s.updated_at`;

export async function createSpace(
  db: Db,
  opts: { tenantId: string; name: string; description?: string },
): Promise<SpaceRecord> {
  return db.one(sql.type(SpaceRow)`
    WITH s AS (
      INSERT INTO spaces (id, tenant_id, name, description) VALUES (${newId('spc')}, ${opts.tenantId}, ${opts.name}, ${opts.description ?? null})
      RETURNING *)
    SELECT s.id, s.name, s.description, 0 AS document_count, s.created_at, s.updated_at FROM s`);
}

/** A space owned by the tenant, or null (legacy spaces without an owner are never returned). */
export async function getSpace(db: Db, tenantId: string, id: string): Promise<SpaceRecord | null> {
  return db.maybeOne(
    sql.type(SpaceRow)`SELECT ${COLUMNS} FROM spaces s WHERE s.tenant_id = ${tenantId} AND s.id = ${id}`,
  );
}

export async function listSpaces(
  db: Db,
  opts: { tenantId: string; limit: number; offset: number },
): Promise<{ data: SpaceRecord[]; total: number }> {
  const [data, total] = await Promise.all([
    db.any(sql.type(SpaceRow)`
      SELECT ${COLUMNS} FROM spaces s WHERE s.tenant_id = ${opts.tenantId}
      ORDER BY s.created_at DESC, s.id DESC LIMIT ${opts.limit} OFFSET ${opts.offset}`),
    db.oneFirst(
      sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM spaces WHERE tenant_id = ${opts.tenantId}`,
    ),
  ]);
  return { data: [...data], total };
}

/** Deletes the space and its documents (with their chunks and memories). Null when not the tenant's. */
export async function deleteSpace(db: Db, tenantId: string, id: string): Promise<{ deletedDocuments: number } | null> {
  return db.transaction(async (tx) => {
    const owned = await tx.exists(
      sql.unsafe`SELECT 1 FROM spaces WHERE tenant_id = ${tenantId} AND id = ${id} FOR UPDATE`,
    );
    if (!owned) return null;
    const docs = await tx.query(sql.unsafe`DELETE FROM documents WHERE tenant_id = ${tenantId} AND space_id = ${id}`);
    await tx.query(sql.unsafe`DELETE FROM spaces WHERE tenant_id = ${tenantId} AND id = ${id}`);
    return { deletedDocuments: docs.rowCount };
  });
}

/** Legacy spaces (no owner), oldest first: what `spaces migrate-legacy` would assign. */
export async function listLegacySpaces(db: Db): Promise<Array<{ id: string; name: string; created_at: string }>> {
  const rows = await db.any(sql.type(z.object({ id: z.string(), name: z.string(), created_at: z.string() }))`
    SELECT id, name, created_at FROM spaces WHERE tenant_id IS NULL ORDER BY created_at, id`);
  return [...rows];
}

/**
 * Assigns legacy spaces to a tenant: all of them, or only `ids`. Idempotent: owned spaces are
 * never reassigned. @returns the ids assigned by this call
 */
export async function assignLegacySpaces(db: Db, opts: { tenantId: string; ids?: string[] }): Promise<string[]> {
  const only = opts.ids ? sql.fragment`AND id = ANY(${sql.array(opts.ids, 'text')})` : sql.fragment``;
  const rows = await db.any(sql.type(z.object({ id: z.string() }))`
    UPDATE spaces SET tenant_id = ${opts.tenantId}, updated_at = now()
    WHERE tenant_id IS NULL ${only} RETURNING id`);
  return rows.map((r) => r.id).sort();
}

import { sql } from 'slonik';
import { z } from 'zod';
import type { Db } from './db';
import { newId } from './ids';

const MemoryRow = z.object({
  id: z.string(),
  kind: z.string(),
  provenance: z.enum(['told', 'read', 'seen', 'learned']),
  content: z.string(),
  document_id: z.string().nullable(),
  created_at: z.string(),
});
export type MemoryRow = z.infer<typeof MemoryRow>;

/** Newest first. `knowledge: true` lists knowledge memories (kind `knowledge`, and everything learned). */
export async function listMemories(
  db: Db,
  opts: { tenantId: string; kind?: string; knowledge?: boolean; limit: number; offset: number },
): Promise<{ data: MemoryRow[]; total: number }> {
  const filters = [sql.fragment`tenant_id = ${opts.tenantId}`];
  if (opts.kind) filters.push(sql.fragment`kind = ${opts.kind}`);
  if (opts.knowledge) filters.push(sql.fragment`(kind = 'knowledge' OR provenance = 'learned')`);
  const where = sql.join(filters, sql.fragment` AND `);
  const [data, total] = await Promise.all([
    db.any(sql.type(MemoryRow)`
      SELECT id, kind, provenance, content, document_id, created_at FROM memories
      WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT ${opts.limit} OFFSET ${opts.offset}`),
    db.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM memories WHERE ${where}`),
  ]);
  return { data: [...data], total };
}

/** A free-standing fragment (no document), e.g. a vision result saved with `seen` provenance. */
export async function addMemory(
  db: Db,
  m: { tenantId: string; kind: string; provenance: MemoryRow['provenance']; content: string },
): Promise<MemoryRow> {
  return db.one(sql.type(MemoryRow)`
    INSERT INTO memories (id, tenant_id, kind, provenance, content)
    VALUES (${newId('mem')}, ${m.tenantId}, ${m.kind}, ${m.provenance}, ${m.content})
    RETURNING id, kind, provenance, content, document_id, created_at`);
}

import { createHash } from 'node:crypto';
import { sql, type DatabaseTransactionConnection } from 'slonik';
import { z } from 'zod';
import { DocumentRecord, type SourceKind } from '../../schema/knowledge';
import type { Db } from './db';
import { newId } from './ids';

const DocumentRow = z.object({
  id: z.string(),
  space_id: z.string().nullable(),
  source_kind: z.enum(['upload', 'ingest', 'web', 'learn']),
  title: z.string(),
  media_type: z.string(),
  size_bytes: z.number(),
  chunk_count: z.number(),
  provenance: z.record(z.string(), z.unknown()),
  excerpt: z.string(),
  created_at: z.string(),
});

const COLUMNS = sql.fragment`id, space_id, source_kind, title, media_type, size_bytes, chunk_count, provenance,
  left(text, 280) AS excerpt, created_at`;

export interface NewDocument {
  /**
   * A caller-chosen id (`doc_` + 20 base32 characters) makes the write idempotent: a retry that
   * finds a document with this id returns it instead of writing a second one. Default: a new id.
   */
  id?: string;
  tenantId: string;
  spaceId?: string | null;
  sourceKind: SourceKind;
  title: string;
  mediaType: string;
  sizeBytes: number;
  text: string;
  provenance?: Record<string, unknown>;
  chunks: string[];
  /** One vector per chunk, written only when the vector table exists (hybrid mode). */
  embeddings?: number[][];
  /** Memory fragments to write, one per chunk. */
  memory?: { kind: string; provenance: 'told' | 'read' | 'seen' | 'learned' };
}

export interface InsertedDocument {
  document: DocumentRecord;
  chunks: number;
  memories: number;
  /** False when a retry (same learning source, or same caller-chosen id) found the document it had already written. */
  created: boolean;
}

const CHUNK_BATCH = 500;

/** Up to CHUNK_BATCH chunk rows from `start`, as an unnest() for INSERT ... SELECT. */
function chunkRows(doc: NewDocument, documentId: string, ids: string[], start: number) {
  const title = doc.title.slice(0, 300);
  const rows = doc.chunks
    .slice(start, start + CHUNK_BATCH)
    .map((text, i) => [ids[start + i], doc.tenantId, documentId, start + i, title, text]);
  return sql.unnest(rows, ['text', 'text', 'text', 'int4', 'text', 'text']);
}

function documentInsert(doc: NewDocument, id: string) {
  const hash = createHash('sha256').update(doc.text).digest('hex');
  return sql.fragment`
    INSERT INTO documents (id, tenant_id, space_id, source_kind, title, media_type, size_bytes, text, content_hash, provenance, chunk_count)
    VALUES (${id}, ${doc.tenantId}, ${doc.spaceId ?? null}, ${doc.sourceKind}, ${doc.title.slice(0, 300)}, ${doc.mediaType},
            ${doc.sizeBytes}, ${doc.text}, ${hash}, ${sql.jsonb(JSON.parse(JSON.stringify(doc.provenance ?? {})))}, ${doc.chunks.length})
    ON CONFLICT DO NOTHING
    RETURNING ${COLUMNS}`;
}

async function insertChunks(
  tx: DatabaseTransactionConnection,
  doc: NewDocument,
  documentId: string,
): Promise<string[]> {
  const ids = doc.chunks.map(() => newId('chk'));
  for (let start = 0; start < doc.chunks.length; start += CHUNK_BATCH) {
    await tx.query(sql.unsafe`
      INSERT INTO chunks (id, tenant_id, document_id, ord, title, text)
      SELECT * FROM ${chunkRows(doc, documentId, ids, start)}`);
  }
  if (doc.embeddings?.length === ids.length) {
    const rows = ids.map((id, i) => [id, doc.tenantId, `[${doc.embeddings![i].join(',')}]`]);
    await tx.query(sql.unsafe`
      INSERT INTO chunk_vectors (chunk_id, tenant_id, embedding)
      SELECT c, t, e::vector FROM ${sql.unnest(rows, ['text', 'text', 'text'])} AS x(c, t, e)`);
  }
  return ids;
}

/** True when `insertDocument` writes `doc` in one statement (no vectors, no memory fragments, one chunk batch). */
export function fitsOneStatement(doc: NewDocument): boolean {
  return !doc.memory && !doc.embeddings?.length && doc.chunks.length <= CHUNK_BATCH;
}

/**
 * CTEs `d` (the document) and `c` (its chunks) for a statement that also writes the row the
 * document belongs to: the document's id and provenance are SQL expressions over `from` (that
 * row's CTE), so they follow the row the statement actually wrote or found. A document that
 * already exists (a retry) is kept, chunks and all. Only for documents that `fitsOneStatement`.
 */
export function documentAlong(
  doc: NewDocument,
  along: {
    from: ReturnType<typeof sql.fragment>;
    id: ReturnType<typeof sql.fragment>;
    provenance: ReturnType<typeof sql.fragment>;
  },
): ReturnType<typeof sql.fragment> {
  const hash = createHash('sha256').update(doc.text).digest('hex');
  const title = doc.title.slice(0, 300);
  const rows = doc.chunks.map((text, i) => [newId('chk'), i, text]);
  return sql.fragment`
    d AS (
      INSERT INTO documents (id, tenant_id, space_id, source_kind, title, media_type, size_bytes, text, content_hash, provenance, chunk_count)
      SELECT ${along.id}, ${doc.tenantId}, ${doc.spaceId ?? null}, ${doc.sourceKind}, ${title}, ${doc.mediaType},
             ${doc.sizeBytes}, ${doc.text}, ${hash}, ${along.provenance}, ${doc.chunks.length}
      FROM ${along.from}
      ON CONFLICT DO NOTHING
      RETURNING id),
    c AS (
      INSERT INTO chunks (id, tenant_id, document_id, ord, title, text)
      SELECT x.id, ${doc.tenantId}, d.id, x.ord, ${title}, x.text
      FROM ${sql.unnest(rows, ['text', 'int4', 'text'])} AS x(id, ord, text), d)`;
}

/**
 * Writes a document with its chunks (and vectors and memory fragments) in one transaction.
 * Written once per caller-chosen `id`, and once per learning source (provenance job_id +
 * source_index): a retry returns the first.
 * @throws when the space does not exist (foreign key): check the space first
 */
export async function insertDocument(db: Db, doc: NewDocument): Promise<InsertedDocument> {
  const id = doc.id ?? newId('doc');
  if (fitsOneStatement(doc)) {
    // The common case in ONE statement (one implicit transaction): no BEGIN/COMMIT round trips.
    // A task's save step spent four round trips here. A conflict falls through to the path below.
    const ids = doc.chunks.map(() => newId('chk'));
    const inserted = await db.maybeOne(sql.type(DocumentRow)`
      WITH d AS (${documentInsert(doc, id)}),
      c AS (
        INSERT INTO chunks (id, tenant_id, document_id, ord, title, text)
        SELECT * FROM ${chunkRows(doc, id, ids, 0)} WHERE EXISTS (SELECT 1 FROM d))
      SELECT * FROM d`);
    if (inserted) return { document: inserted, chunks: ids.length, memories: 0, created: true };
  }
  return db.transaction(async (tx) => {
    const inserted = await tx.maybeOne(sql.type(DocumentRow)`${documentInsert(doc, id)}`);
    if (!inserted) {
      const p = doc.provenance ?? {};
      const existing = doc.id
        ? await tx.one(
            sql.type(
              DocumentRow,
            )`SELECT ${COLUMNS} FROM documents WHERE tenant_id = ${doc.tenantId} AND id = ${doc.id}`,
          )
        : await tx.one(sql.type(DocumentRow)`
          SELECT ${COLUMNS} FROM documents WHERE tenant_id = ${doc.tenantId} AND source_kind = 'learn'
            AND provenance->>'job_id' = ${String(p.job_id)} AND provenance->>'source_index' = ${String(p.source_index)}`);
      return { document: existing, chunks: existing.chunk_count, memories: 0, created: false };
    }
    const chunkIds = await insertChunks(tx, doc, id);
    if (doc.memory) {
      const m = doc.memory;
      const rows = chunkIds.map((chunkId, i) => [
        newId('mem'),
        doc.tenantId,
        id,
        chunkId,
        m.kind,
        m.provenance,
        doc.chunks[i],
      ]);
      await tx.query(sql.unsafe`
        INSERT INTO memories (id, tenant_id, document_id, chunk_id, kind, provenance, content)
        SELECT * FROM ${sql.unnest(rows, ['text', 'text', 'text', 'text', 'text', 'text', 'text'])}`);
    }
    return { document: inserted, chunks: chunkIds.length, memories: doc.memory ? chunkIds.length : 0, created: true };
  });
}

/** One document of the tenant, or null. */
export async function getDocument(db: Db, tenantId: string, id: string): Promise<DocumentRecord | null> {
  return db.maybeOne(
    sql.type(DocumentRow)`SELECT ${COLUMNS} FROM documents WHERE tenant_id = ${tenantId} AND id = ${id}`,
  );
}

/** Extracted text and title of a document of the tenant, or null. */
export async function getDocumentText(
  db: Db,
  tenantId: string,
  id: string,
): Promise<{ title: string; text: string; media_type: string } | null> {
  return db.maybeOne(sql.type(z.object({ title: z.string(), text: z.string(), media_type: z.string() }))`
    SELECT title, text, media_type FROM documents WHERE tenant_id = ${tenantId} AND id = ${id}`);
}

/** Newest first; `spaceId` limits to one space, `sourceKind` to one kind. */
export async function listDocuments(
  db: Db,
  opts: { tenantId: string; spaceId?: string; sourceKind?: SourceKind; limit: number; offset: number },
): Promise<{ data: DocumentRecord[]; total: number }> {
  const filters = [sql.fragment`tenant_id = ${opts.tenantId}`];
  if (opts.spaceId) filters.push(sql.fragment`space_id = ${opts.spaceId}`);
  if (opts.sourceKind) filters.push(sql.fragment`source_kind = ${opts.sourceKind}`);
  const where = sql.join(filters, sql.fragment` AND `);
  const [data, total] = await Promise.all([
    db.any(sql.type(DocumentRow)`
      SELECT ${COLUMNS} FROM documents WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT ${opts.limit} OFFSET ${opts.offset}`),
    db.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM documents WHERE ${where}`),
  ]);
  return { data: [...data], total };
}

/**
 * Deletes learned knowledge: one document (`documentId`, any source kind) or every learned document.
 * Chunks, vectors and memory fragments go with them (cascade).
 */
export async function deleteKnowledge(
  db: Db,
  opts: { tenantId: string; documentId?: string },
): Promise<{ documents: number; chunks: number }> {
  const where = opts.documentId
    ? sql.fragment`tenant_id = ${opts.tenantId} AND id = ${opts.documentId}`
    : sql.fragment`tenant_id = ${opts.tenantId} AND source_kind = 'learn'`;
  const r = await db.one(sql.type(z.object({ documents: z.number(), chunks: z.number() }))`
    WITH gone AS (DELETE FROM documents WHERE ${where} RETURNING chunk_count)
    SELECT count(*)::int AS documents, coalesce(sum(chunk_count), 0)::int AS chunks FROM gone`);
  return r;
}

import pg from 'pg';
import { sql } from 'slonik';
import { deleteKnowledge } from '../../activities/store/documents';
import { useStoreDatabase } from '../helpers/store-db';

// Deleting a document cascades to its memory fragments through memories.document_id and, once per
// deleted chunk, through memories.chunk_id. Without an index on those columns every cascade step scans
// all memories of all tenants (measured: 989 ms for a 200-chunk document next to 50,000 memories).
jest.setTimeout(120_000);

const store = useStoreDatabase({ maxConnections: 2 });

beforeAll(async () => {
  const { db, tenantId } = store;
  // Memories told directly (no document) and two documents of 20 chunks, each chunk with its memory.
  await db.query(sql.unsafe`
    INSERT INTO memories (id, tenant_id, kind, provenance, content)
    SELECT 'm' || g, ${tenantId}, 'note', 'told', 'x' FROM generate_series(1, 3000) g`);
  for (const d of ['d1', 'd2']) {
    await db.query(sql.unsafe`
      INSERT INTO documents (id, tenant_id, source_kind, title, media_type, size_bytes, text, content_hash, chunk_count)
      VALUES (${d}, ${tenantId}, 'ingest', ${d}, 'text/plain', 1, 'x', 'h', 20)`);
    await db.query(sql.unsafe`
      INSERT INTO chunks (id, tenant_id, document_id, ord, title, text)
      SELECT ${d} || '_c' || g, ${tenantId}, ${d}, g, ${d}, 'x' FROM generate_series(1, 20) g`);
    await db.query(sql.unsafe`
      INSERT INTO memories (id, tenant_id, document_id, chunk_id, kind, provenance, content)
      SELECT ${d} || '_m' || g, ${tenantId}, ${d}, ${d} || '_c' || g, 'fact', 'read', 'x' FROM generate_series(1, 20) g`);
  }
  await db.query(sql.unsafe`ANALYZE memories`);
}, 120_000);

type PlanNode = { 'Node Type': string; 'Relation Name'?: string; 'Index Name'?: string; Plans?: PlanNode[] };
const nodesOf = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodesOf)];

/** The plan of the statement PostgreSQL's cascade runs for `column` (a cached, generic plan), not executed. */
async function cascadePlan(column: 'document_id' | 'chunk_id'): Promise<PlanNode[]> {
  const client = new pg.Client({ connectionString: store.url });
  await client.connect();
  try {
    await client.query('SET plan_cache_mode = force_generic_plan');
    await client.query(`PREPARE cascade(text) AS DELETE FROM ONLY memories WHERE $1 OPERATOR(pg_catalog.=) ${column}`);
    const r = await client.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
      `EXPLAIN (FORMAT JSON) EXECUTE cascade('d1_c1')`,
    );
    return nodesOf(r.rows[0]['QUERY PLAN'][0].Plan);
  } finally {
    await client.end();
  }
}

test.each([
  ['document_id', 'memories_document_idx'],
  ['chunk_id', 'memories_chunk_idx'],
] as const)(
  'the cascade through memories.%s finds the rows by index, not by scanning every memory',
  async (column, index) => {
    const nodes = await cascadePlan(column);
    expect(nodes.filter((n) => n['Node Type'] === 'Seq Scan' && n['Relation Name'] === 'memories')).toEqual([]);
    expect(nodes.map((n) => n['Index Name'])).toContain(index);
  },
);

test('deleting a document still takes its chunks and memory fragments, and nothing else', async () => {
  const { db, tenantId } = store;
  const count = async (table: 'chunks' | 'memories', where = sql.fragment`TRUE`) =>
    db.oneFirst(sql.unsafe`SELECT count(*)::int FROM ${sql.identifier([table])} WHERE ${where}`);
  expect(await deleteKnowledge(db, { tenantId, documentId: 'd1' })).toEqual({ documents: 1, chunks: 20 });
  expect(await count('chunks', sql.fragment`document_id = 'd1'`)).toBe(0);
  expect(await count('memories', sql.fragment`document_id = 'd1' OR chunk_id LIKE 'd1\\_%'`)).toBe(0);
  expect(await count('chunks')).toBe(20);
  expect(await count('memories')).toBe(3000 + 20);
});

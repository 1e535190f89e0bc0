import { sql } from 'slonik';
import { z } from 'zod';
import type { Db } from '../store/db';
import { embedTexts } from './embeddings';
import type { KnowledgeDeps } from './pipeline';

type BackfillDeps = Pick<KnowledgeDeps, 'db' | 'config'> & { log?: KnowledgeDeps['log'] };

const BATCH = 64;
const running = new WeakMap<Db, Promise<number>>();

/**
 * Gives vectors to chunks written while the mode was `fts` (docs/decisions.md, "Hybrid search:
 * vectors for chunks written in fts mode"): per tenant, batches of 64 vectorless chunks are
 * embedded and inserted (ON CONFLICT DO NOTHING, so a concurrent index or a rerun is harmless).
 * Stops on the first embedding error; the next hybrid mode refresh starts it again.
 * @returns how many chunks got a vector
 */
export async function backfillVectors(deps: BackfillDeps, batch = BATCH): Promise<number> {
  const tenants = await deps.db.anyFirst(sql.type(z.object({ tenant_id: z.string() }))`
    SELECT DISTINCT c.tenant_id FROM chunks c
    WHERE NOT EXISTS (SELECT 1 FROM chunk_vectors v WHERE v.chunk_id = c.id)
    ORDER BY c.tenant_id`);
  let done = 0;
  for (const tenantId of tenants) {
    for (;;) {
      const rows = await deps.db.any(sql.type(z.object({ id: z.string(), text: z.string() }))`
        SELECT c.id, c.text FROM chunks c
        WHERE c.tenant_id = ${tenantId} AND NOT EXISTS (SELECT 1 FROM chunk_vectors v WHERE v.chunk_id = c.id)
        ORDER BY c.id
        LIMIT ${batch}`);
      if (!rows.length) break;
      const vectors = await embedTexts(
        deps.config,
        rows.map((r) => r.text),
      );
      if (vectors.length !== rows.length)
        throw new Error(`embedding provider returned ${vectors.length} vectors for ${rows.length} chunks`);
      const values = rows.map((r, i) => [r.id, tenantId, `[${vectors[i].join(',')}]`]);
      // The chunk may have been deleted meanwhile: insert only rows whose chunk still exists.
      const inserted = await deps.db.query(sql.unsafe`
        INSERT INTO chunk_vectors (chunk_id, tenant_id, embedding)
        SELECT x.c, x.t, x.e::vector FROM ${sql.unnest(values, ['text', 'text', 'text'])} AS x(c, t, e)
        WHERE EXISTS (SELECT 1 FROM chunks c WHERE c.id = x.c AND c.tenant_id = x.t)
        ON CONFLICT (chunk_id) DO NOTHING`);
      done += inserted.rowCount;
      deps.log?.info({ tenantId, batch: rows.length, done }, 'vector backfill progress');
      if (inserted.rowCount === 0) break; // every row vanished or was filled concurrently: look again next refresh
    }
  }
  return done;
}

/** Starts the backfill in the background, once at a time per pool; the promise is for tests and logs. */
export function startVectorBackfill(deps: BackfillDeps): Promise<number> {
  const current = running.get(deps.db);
  if (current) return current;
  const run = backfillVectors(deps)
    .catch((err: Error) => {
      deps.log?.warn({ err: err.message }, 'vector backfill stopped; it resumes at the next search-mode refresh');
      return 0;
    })
    .finally(() => running.delete(deps.db));
  running.set(deps.db, run);
  return run;
}

/** The backfill running on this pool, if any. */
export function vectorBackfill(db: Db): Promise<number> | undefined {
  return running.get(db);
}

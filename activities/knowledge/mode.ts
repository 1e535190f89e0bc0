import { sql } from 'slonik';
import type { Logger } from 'pino';
import type { Config } from '../../schema/config';
import type { KnowledgeHealth } from '../../schema/knowledge';
import type { Db } from '../store/db';
import { startVectorBackfill } from './backfill';
import { embedTexts } from './embeddings';

const TTL_MS = 60_000;
const cache = new WeakMap<Db, { at: number; value: Promise<KnowledgeHealth> }>();

/** pgvector available and its table ready (created here: the extension is optional, so no migration does it). */
async function ensureVectorTable(db: Db, log?: Logger): Promise<boolean> {
  try {
    const available = await db.exists(sql.unsafe`SELECT 1 FROM pg_available_extensions WHERE name = 'vector'`);
    if (!available) return false;
    await db.query(sql.unsafe`CREATE EXTENSION IF NOT EXISTS vector`);
    await db.query(sql.unsafe`
      CREATE TABLE IF NOT EXISTS chunk_vectors (
        chunk_id  text PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
        tenant_id text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        embedding vector NOT NULL)`);
    await db.query(sql.unsafe`CREATE INDEX IF NOT EXISTS chunk_vectors_tenant_idx ON chunk_vectors (tenant_id)`);
    return true;
  } catch (err) {
    log?.warn({ err: (err as Error).message }, 'pgvector is available but could not be enabled; full-text search only');
    return false;
  }
}

/**
 * Which search mode is active: `hybrid` when pgvector is usable and the provider answers
 * `/embeddings`, else `fts`. Checked at most once a minute per pool.
 */
export function knowledgeMode(db: Db, config: Config, log?: Logger): Promise<KnowledgeHealth> {
  const hit = cache.get(db);
  if (hit && Date.now() - hit.at < TTL_MS) return hit.value;
  const value = (async (): Promise<KnowledgeHealth> => {
    const vector = await ensureVectorTable(db, log);
    let embeddings = false;
    if (config.openai.baseUrl) {
      embeddings = await embedTexts(config, ['probe'], { timeoutMs: 3000 }).then(
        (v) => v.length === 1,
        () => false,
      );
    }
    const search_mode = vector && embeddings ? 'hybrid' : 'fts';
    // Chunks indexed while the mode was fts get their vectors in the background (never awaited here).
    if (search_mode === 'hybrid') void startVectorBackfill({ db, config, log });
    return { search_mode, vector_extension: vector, embeddings };
  })();
  cache.set(db, { at: Date.now(), value });
  return value;
}

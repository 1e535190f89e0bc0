import type { SourceKind } from '../../schema/knowledge';
import { chunkHits, ftsCandidates, vectorCandidates } from '../store/chunks';
import { embedTexts } from './embeddings';
import { fuseRankings } from './fusion';
import { knowledgeMode } from './mode';
import type { KnowledgeDeps } from './pipeline';

/** Ranked chunks with document references and highlighted snippets; hybrid (RRF) when vectors are active. */
export async function searchKnowledge(
  deps: KnowledgeDeps,
  opts: { tenantId: string; q: string; limit: number; spaceId?: string; sourceKind?: SourceKind },
) {
  const filter = { tenantId: opts.tenantId, spaceId: opts.spaceId, sourceKind: opts.sourceKind };
  const pool = Math.max(50, opts.limit * 3);
  const mode = (await knowledgeMode(deps.db, deps.config, deps.log)).search_mode;
  const fts = await ftsCandidates(deps.db, filter, opts.q, pool);
  let ranked = fts;
  let used: 'fts' | 'hybrid' = 'fts';
  if (mode === 'hybrid') {
    try {
      const [vector] = await embedTexts(deps.config, [opts.q], { timeoutMs: 10_000 });
      const near = await vectorCandidates(deps.db, filter, vector, pool);
      ranked = fuseRankings([fts, near]);
      used = 'hybrid';
    } catch (err) {
      deps.log.warn({ err: (err as Error).message }, 'vector search failed; answering with full-text results');
    }
  }
  const top = ranked.slice(0, opts.limit);
  const score = new Map(top.map((r) => [r.id, r.score]));
  const hits = await chunkHits(
    deps.db,
    opts.tenantId,
    top.map((r) => r.id),
    opts.q,
  );
  return {
    query: opts.q,
    mode: used,
    data: hits.map((h) => ({ ...h, score: Number((score.get(h.chunk_id) ?? 0).toFixed(6)) })),
  };
}

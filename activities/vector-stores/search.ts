import type { Logger } from 'pino';
import type { Config } from '../../schema/config';
import { AppError } from '../../schema/errors';
import type { Filter, RankingOptions } from '../../schema/vector-stores';
import { embedTexts } from '../knowledge/embeddings';
import { fuseRankings } from '../knowledge/fusion';
import type { Db } from '../store/db';
import {
  chunksById,
  storesExpired,
  storesHaveVectors,
  textRanking,
  touchVectorStores,
  vectorRanking,
} from '../store/vector-stores';
import { unit } from '.';

/** Candidates each ranking contributes per query, before fusion. */
const POOL = 100;

/** One search result: a chunk of a file, with its score (0-1). */
export interface VectorSearchHit {
  file_id: string;
  filename: string;
  score: number;
  attributes: Record<string, string | number | boolean> | null;
  text: string;
}

/**
 * Searches the tenant's stores (ids already checked as its own) for each query: chunks of completed files matching
 * the filter, by full text and, when the provider embeds and the chunks have vectors, by cosine similarity; the
 * rankings of every query are fused by reciprocal rank (weighted by `hybrid_search`), or with ranker `none` the
 * results are ordered by score alone. A result's score is its cosine similarity where it has one, else its text rank
 * (0-1); `score_threshold` drops results below it. Searching makes the stores active (their expiry moves).
 */
export async function searchVectorStores(
  deps: { db: Db; config: Config; log: Logger },
  o: {
    tenantId: string;
    storeIds: string[];
    queries: string[];
    limit: number;
    filter?: Filter;
    ranking?: RankingOptions;
    signal?: AbortSignal;
  },
): Promise<VectorSearchHit[]> {
  const scope = { tenantId: o.tenantId, storeIds: o.storeIds, filter: o.filter };
  const textLists = await Promise.all(o.queries.map((query) => textRanking(deps.db, { ...scope, query, limit: POOL })));
  let vectorLists: Array<Array<{ id: string; score: number }>> = [];
  // The query is embedded only when the stores hold vectors to compare it with (none: read without a provider).
  if (deps.config.openai.baseUrl && (await storesHaveVectors(deps.db, o.tenantId, o.storeIds))) {
    try {
      const vectors = await embedTexts(deps.config, o.queries, { timeoutMs: 10_000, signal: o.signal });
      vectorLists = await Promise.all(
        vectors.map((v) => vectorRanking(deps.db, { ...scope, embedding: unit(v), limit: POOL })),
      );
    } catch (err) {
      if (o.signal?.aborted) throw err;
      deps.log.warn({ err: (err as Error).message }, 'vector store search: embedding failed; full text only');
    }
  }
  const score = new Map<string, number>();
  for (const list of textLists) for (const r of list) score.set(r.id, Math.max(score.get(r.id) ?? 0, r.score));
  const cosine = new Map<string, number>();
  for (const list of vectorLists) for (const r of list) cosine.set(r.id, Math.max(cosine.get(r.id) ?? -1, r.score));
  for (const [id, c] of cosine) score.set(id, Math.min(1, Math.max(0, c)));
  const threshold = o.ranking?.score_threshold ?? 0;
  let order: string[];
  if (o.ranking?.ranker === 'none') order = [...score.keys()].sort((a, b) => score.get(b)! - score.get(a)!);
  else {
    const w = o.ranking?.hybrid_search;
    const weights = [...textLists.map(() => w?.text_weight ?? 1), ...vectorLists.map(() => w?.embedding_weight ?? 1)];
    // A list weighted 0 adds nothing: a chunk only it found is not a result.
    order = fuseRankings([...textLists, ...vectorLists], 60, weights)
      .filter((r) => r.score > 0)
      .map((r) => r.id);
  }
  const top = order.filter((id) => score.get(id)! >= threshold).slice(0, o.limit);
  const hits = await chunksById(deps.db, o.tenantId, top);
  await touchVectorStores(deps.db, o.tenantId, o.storeIds);
  return hits.map((h) => ({
    file_id: h.file_id,
    filename: h.filename,
    score: Number(score.get(h.id)!.toFixed(6)),
    attributes: h.attributes,
    text: h.text,
  }));
}

/** The 400 of a search of an expired store, naming where its id was given. */
export function expiredStore(id: string, path: string): AppError {
  return new AppError(
    'invalid_request',
    `Vector store ${id} has expired (expires_after): create a new one, or set expires_after on a store before it expires.`,
    { details: [{ path, message: 'vector store expired' }] },
  );
}

/**
 * Checks that every store is the tenant's and not expired, before a search.
 * @throws AppError not_found (unknown or another tenant's) or invalid_request (expired), naming `pathOf(k)`
 */
export async function searchableStores(db: Db, tenantId: string, ids: string[], pathOf: (k: number) => string) {
  const expired = await storesExpired(db, tenantId, ids);
  for (const [k, id] of ids.entries()) {
    if (!expired.has(id))
      throw new AppError(
        'not_found',
        `${pathOf(k)}: no vector store '${id}' among yours (see GET /v1/vector_stores).`,
        {
          details: [{ path: pathOf(k), message: 'unknown vector store' }],
        },
      );
    if (expired.get(id)) throw expiredStore(id, pathOf(k));
  }
}

/** OpenAI's search results page (one page: every result asked for). */
export function resultsPage(queries: string[], hits: VectorSearchHit[]) {
  return {
    object: 'vector_store.search_results.page' as const,
    search_query: queries,
    data: hits.map((h) => ({
      file_id: h.file_id,
      filename: h.filename,
      score: h.score,
      attributes: h.attributes,
      content: [{ type: 'text' as const, text: h.text }],
    })),
    has_more: false,
    next_page: null,
  };
}

import { sql } from 'slonik';
import { z } from 'zod';
import type { SourceKind } from '../../schema/knowledge';
import type { Db } from './db';
import { escapeHtml } from '../../schema/snippet';

// Highlight delimiters that cannot occur in extracted text; replaced after HTML-escaping.
const START = '\u0001';
const STOP = '\u0002';
const HEADLINE_OPTIONS = `StartSel=${START}, StopSel=${STOP}, MaxWords=35, MinWords=12, MaxFragments=2, FragmentDelimiter=" … "`;

export interface ChunkFilter {
  tenantId: string;
  spaceId?: string;
  sourceKind?: SourceKind;
}

function filterFragment(f: ChunkFilter) {
  const parts = [sql.fragment`c.tenant_id = ${f.tenantId}`];
  if (f.spaceId || f.sourceKind) {
    const doc = [sql.fragment`d.id = c.document_id`, sql.fragment`d.tenant_id = ${f.tenantId}`];
    if (f.spaceId) doc.push(sql.fragment`d.space_id = ${f.spaceId}`);
    if (f.sourceKind) doc.push(sql.fragment`d.source_kind = ${f.sourceKind}`);
    parts.push(sql.fragment`EXISTS (SELECT 1 FROM documents d WHERE ${sql.join(doc, sql.fragment` AND `)})`);
  }
  return sql.join(parts, sql.fragment` AND `);
}

const Ranked = z.object({ id: z.string(), score: z.number() });

/**
 * Full-text candidates ranked by cover density (title weighs more). Chunks matching the whole
 * `websearch_to_tsquery` come first; for plain word queries, chunks matching only some of the
 * words follow (an OR of the same lexemes), so natural-language questions still find answers.
 */
export async function ftsCandidates(
  db: Db,
  f: ChunkFilter,
  q: string,
  limit: number,
): Promise<Array<{ id: string; score: number }>> {
  const loose = sql.fragment`(SELECT CASE WHEN s::text ~ '(!|<->|<[0-9]+>)' OR s::text = '' THEN s
    ELSE replace(s::text, ' & ', ' | ')::tsquery END FROM websearch_to_tsquery('english', ${q}) AS s)`;
  // Stage 1: chunks matching the whole query. Stage 2 (only when stage 1 is short): partial matches.
  const strict = await db.any(sql.type(Ranked)`
    SELECT c.id, (ts_rank_cd(c.tsv, ${loose}, 32) + 1)::float8 AS score
    FROM chunks c, websearch_to_tsquery('english', ${q}) AS query
    WHERE ${filterFragment(f)} AND c.tsv @@ query
    ORDER BY score DESC, c.id
    LIMIT ${limit}`);
  if (strict.length >= limit) return [...strict];
  const partial = await db.any(sql.type(Ranked)`
    SELECT c.id, ts_rank_cd(c.tsv, lq.q, 32)::float8 AS score
    FROM chunks c, (SELECT ${loose} AS q) AS lq, websearch_to_tsquery('english', ${q}) AS whole
    WHERE ${filterFragment(f)} AND c.tsv @@ lq.q AND NOT (c.tsv @@ whole)
    ORDER BY score DESC, c.id
    LIMIT ${limit - strict.length}`);
  return [...strict, ...partial];
}

/** Nearest chunks by cosine distance (hybrid mode only: needs the chunk_vectors table). */
export async function vectorCandidates(
  db: Db,
  f: ChunkFilter,
  embedding: number[],
  limit: number,
): Promise<Array<{ id: string; score: number }>> {
  const vec = `[${embedding.join(',')}]`;
  const rows = await db.any(sql.type(Ranked)`
    SELECT c.id, (1 - (v.embedding <=> ${vec}::vector))::float8 AS score
    FROM chunk_vectors v JOIN chunks c ON c.id = v.chunk_id
    WHERE v.tenant_id = ${f.tenantId} AND ${filterFragment(f)}
    ORDER BY v.embedding <=> ${vec}::vector
    LIMIT ${limit}`);
  return [...rows];
}

const HitRow = z.object({
  chunk_id: z.string(),
  document_id: z.string(),
  document_title: z.string(),
  source_kind: z.enum(['upload', 'ingest', 'web', 'learn']),
  space_id: z.string().nullable(),
  ord: z.number(),
  headline: z.string(),
  url: z.string().nullable(),
});

/** Plain snippet and HTML highlight from a ts_headline result carrying our delimiters. */
export function renderHeadline(headline: string): { snippet: string; highlight: string } {
  const clean = headline.replace(/\s+/g, ' ').trim();
  return {
    snippet: clean.replaceAll(START, '').replaceAll(STOP, ''),
    highlight: escapeHtml(clean).replaceAll(START, '<mark>').replaceAll(STOP, '</mark>'),
  };
}

/** Hit details with highlighted snippets, in the order of `ids`. */
export async function chunkHits(db: Db, tenantId: string, ids: string[], q: string) {
  if (!ids.length) return [];
  const rows = await db.any(sql.type(HitRow)`
    SELECT c.id AS chunk_id, c.document_id, d.title AS document_title, d.source_kind, d.space_id, c.ord,
           ts_headline('english', c.text, websearch_to_tsquery('english', ${q}), ${HEADLINE_OPTIONS}) AS headline,
           coalesce(d.provenance->>'final_url', d.provenance->>'url') AS url
    FROM chunks c JOIN documents d ON d.id = c.document_id AND d.tenant_id = ${tenantId}
    WHERE c.tenant_id = ${tenantId} AND c.id = ANY(${sql.array(ids, 'text')})`);
  const byId = new Map(rows.map((r) => [r.chunk_id, r]));
  return ids.flatMap((id) => {
    const r = byId.get(id);
    if (!r) return [];
    const { headline, ...rest } = r;
    return [{ ...rest, ...renderHeadline(headline) }];
  });
}

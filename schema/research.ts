import { z } from 'zod';
import { waitSeconds } from './common';

export const RESEARCH_DEPTHS = {
  quick: { queries: 1, sources: 3 },
  standard: { queries: 3, sources: 6 },
  deep: { queries: 5, sources: 10 },
} as const;

export const ResearchBody = z
  .object({
    query: z.string().trim().min(3).max(2000),
    depth: z
      .enum(['quick', 'standard', 'deep'])
      .default('standard')
      .describe('quick: 1 search query, 3 sources; standard: 3 and 6; deep: 5 and 10.'),
    max_sources: z.number().int().min(1).max(20).optional().describe('Sources to fetch (default by depth).'),
    wait_s: waitSeconds('Wait up to this long for the report; 200 with the report when it finishes in time, else 202.'),
  })
  .meta({ id: 'ResearchRequest' });
export type ResearchBody = z.infer<typeof ResearchBody>;

export const ResearchStatus = z.enum(['queued', 'running', 'completed', 'failed', 'cancelled']);

export const Citation = z.object({
  id: z.number().int().describe('The number used in the report, e.g. [1].'),
  source: z.number().int().describe('Index (1-based) into sources.'),
  url: z.string(),
  quote: z.string().describe('A passage that occurs verbatim in the fetched source.'),
});

export const ResearchReport = z.object({
  markdown: z.string(),
  citations: z.array(Citation).describe('Every citation here was verified against a source fetched in this run.'),
  unverified: z
    .array(
      z.object({ id: z.number().int(), source: z.number().int().nullable(), quote: z.string(), reason: z.string() }),
    )
    .describe('Citations the writer gave that could not be verified: their markers were removed from the report.'),
});
export type ResearchReport = z.infer<typeof ResearchReport>;

export const ResearchSource = z.object({
  n: z.number().int(),
  url: z.string(),
  title: z.string(),
  status: z.enum(['pending', 'fetched', 'failed']),
  error: z.string().optional(),
});
export type ResearchSource = z.infer<typeof ResearchSource>;

export const ResearchState = z
  .object({
    id: z.string(),
    status: ResearchStatus,
    stage: z.string().describe('queued, planning, searching, fetching, writing, done'),
    query: z.string(),
    depth: z.string(),
    max_sources: z.number().int(),
    plan: z.array(z.string()).nullable().describe('The search queries the planner chose.'),
    sources: z.array(ResearchSource),
    report: ResearchReport.nullable(),
    error: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'ResearchJob' });
export type ResearchState = z.infer<typeof ResearchState>;

export const ResearchParams = z.object({ id: z.string().regex(/^res_[A-Za-z0-9_-]{1,60}$/, 'must be a research id') });

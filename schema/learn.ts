import { z } from 'zod';
import { DocumentId, SpaceId } from './knowledge';

export const LEARN_STATUSES = ['queued', 'running', 'completed', 'failed', 'cancelled'] as const;
export type LearnStatus = (typeof LEARN_STATUSES)[number];
export const SOURCE_STATUSES = ['pending', 'running', 'completed', 'failed', 'cancelled'] as const;
export type SourceStatus = (typeof SOURCE_STATUSES)[number];

const UrlSource = z.object({ url: z.url({ protocol: /^https?$/ }).max(2048) }).strict();
const TextSource = z
  .object({ text: z.string().trim().min(1).max(500_000), title: z.string().trim().min(1).max(300).optional() })
  .strict();
const DocumentSource = z.object({ document_id: DocumentId }).strict();

export const LearnSource = z
  .union([UrlSource, TextSource, DocumentSource])
  .describe('Exactly one of: { url }, { text, title? }, { document_id }.')
  .meta({ id: 'LearnSource' });

export const LearnBody = z
  .object({
    sources: z.array(LearnSource).min(1).max(50),
    space_id: SpaceId.optional().describe('Space the learned documents are filed in.'),
  })
  .meta({ id: 'LearnRequest' });
export type LearnBody = z.infer<typeof LearnBody>;

export const LearnStarted = z
  .object({ job_id: z.string(), status: z.enum(LEARN_STATUSES) })
  .meta({ id: 'LearnStarted' });

export const LearnSourceState = z
  .object({
    index: z.number().int(),
    kind: z.enum(['url', 'text', 'document']),
    url: z.string().optional(),
    title: z.string().optional(),
    document_id: z.string().optional().describe('For { document_id } sources: the document learned from.'),
    status: z.enum(SOURCE_STATUSES),
    error: z.string().optional(),
    learned_document_id: z.string().optional().describe('The knowledge document written for this source.'),
    chunks: z.number().int().optional(),
  })
  .meta({ id: 'LearnSourceState' });

export const LearnJobState = z
  .object({
    job_id: z.string(),
    status: z.enum(LEARN_STATUSES),
    progress: z
      .object({ done: z.number().int(), total: z.number().int() })
      .describe('done counts finished sources (completed or failed).'),
    space_id: z.string().nullable(),
    sources: z.array(LearnSourceState),
    error: z.string().optional(),
    created_at: z.string(),
    started_at: z.string().nullable(),
    finished_at: z.string().nullable(),
  })
  .meta({ id: 'LearnJob' });
export type LearnJobState = z.infer<typeof LearnJobState>;

/** Workflow input: ids only, the sources live in PostgreSQL. */
export interface LearnWorkflowInput {
  jobId: string;
  tenantId: string;
  total: number;
  /** Sources processed at once. */
  concurrency?: number;
}

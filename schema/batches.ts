import { z } from 'zod';
import { cursorListOf } from './common';
import { FileRef, Metadata, nullable } from './chat';

/** The endpoints a batch's requests may go to here. */
export const BATCH_ENDPOINTS = [
  '/v1/responses',
  '/v1/chat/completions',
  '/v1/embeddings',
  '/v1/completions',
  '/v1/moderations',
] as const;

export const BATCH_ID = /^batch_[A-Za-z0-9]{1,100}$/;
export const BatchId = z.string().regex(BATCH_ID, 'a batch id (batch_...)');

export const CreateBatchRequest = z
  .object({
    input_file_id: FileRef.describe('A JSONL file uploaded with purpose batch: one request a line.'),
    endpoint: z
      .string()
      .max(100)
      .refine((e) => (BATCH_ENDPOINTS as readonly string[]).includes(e), {
        message: `the endpoints batches take here: ${BATCH_ENDPOINTS.join(', ')}`,
      }),
    completion_window: z.literal('24h'),
    metadata: nullable(Metadata),
    output_expires_after: z
      .object({ anchor: z.literal('created_at'), seconds: z.number().int().min(3600).max(2_592_000) })
      .nullish(),
  })
  .meta({ id: 'CreateBatchRequest' });
export type CreateBatchRequest = z.output<typeof CreateBatchRequest>;

/** One line of a batch's input file. */
export const BatchLine = z
  .object({
    custom_id: z.string().min(1).max(512),
    method: z.literal('POST'),
    url: z.string().max(100),
    body: z.record(z.string(), z.unknown()),
  })
  .strict();

export const ListBatchesQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  after: BatchId.optional(),
});

export const BatchObject = z
  .object({
    id: z.string(),
    object: z.literal('batch'),
    endpoint: z.string(),
    input_file_id: z.string(),
    completion_window: z.string(),
    status: z.enum([
      'validating',
      'failed',
      'in_progress',
      'finalizing',
      'completed',
      'expired',
      'cancelling',
      'cancelled',
    ]),
    created_at: z.number().int(),
    request_counts: z.object({ total: z.number().int(), completed: z.number().int(), failed: z.number().int() }),
    output_file_id: z.string().optional(),
    error_file_id: z.string().optional(),
    errors: z
      .object({
        object: z.literal('list'),
        data: z.array(
          z.object({
            code: z.string(),
            message: z.string(),
            param: z.string().nullable(),
            line: z.number().nullable(),
          }),
        ),
      })
      .optional(),
    metadata: z.record(z.string(), z.string()).nullable(),
  })
  .loose()
  .meta({ id: 'Batch' });

export const BatchList = cursorListOf(BatchObject, 'BatchList');

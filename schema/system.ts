import { z } from 'zod';
import { KnowledgeHealth } from './knowledge';

export const HealthResponse = z
  .object({
    status: z.enum(['ok', 'degraded']),
    system: z.string(),
    version: z.string(),
    checks: z.object({
      database: z.object({
        status: z.enum(['ok', 'down']),
        latency_ms: z.number().optional(),
        error: z.string().optional(),
      }),
      temporal: z.object({
        status: z.enum(['ok', 'down']),
        latency_ms: z.number().optional(),
        error: z.string().optional(),
      }),
    }),
    knowledge: KnowledgeHealth.optional().describe(
      'Active knowledge search mode (hybrid needs pgvector and a provider /embeddings).',
    ),
  })
  .meta({ id: 'HealthResponse' });

export const WaitlistBody = z
  .object({
    email: z.email().max(320).optional(),
    name: z.string().max(200).optional(),
  })
  .meta({ id: 'WaitlistRequest' });

export const WaitlistResponse = z.object({ ok: z.literal(true), duplicate: z.boolean() });

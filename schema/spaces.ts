import { z } from 'zod';

export const SpaceBody = z
  .object({
    name: z.string().trim().min(1).max(200),
    description: z.string().trim().max(2000).optional(),
  })
  .meta({ id: 'SpaceCreateRequest' });

export const SpaceRecord = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    document_count: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Space' });
export type SpaceRecord = z.infer<typeof SpaceRecord>;

export const SpaceList = z
  .object({ data: z.array(SpaceRecord), total: z.number().int(), limit: z.number().int(), offset: z.number().int() })
  .meta({ id: 'SpaceList' });

export const SpaceDeleted = z
  .object({ id: z.string(), deleted: z.literal(true), deleted_documents: z.number().int() })
  .meta({ id: 'SpaceDeleted' });

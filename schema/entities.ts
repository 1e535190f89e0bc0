import { z } from 'zod';
import { blankAsAbsent } from './common';

export const ENTITY_KINDS = ['person', 'business', 'vendor', 'account', 'unknown'] as const;
export const ENTITY_EVENT_KINDS = ['message', 'invoice', 'booking', 'call', 'note', 'event'] as const;

const name = z.string().trim().min(1).max(300);

export const EntityUpsertBody = z
  .strictObject({
    id: z.string().min(1).max(100).optional().describe('Supply to update an existing entity (unknown id: 404).'),
    name,
    kind: z.enum(ENTITY_KINDS).optional().describe('person, business, vendor, account, unknown (default unknown).'),
    aliases: z.array(name).max(50).optional().describe('Alternative names; replaces the stored list when given.'),
  })
  .meta({ id: 'EntityUpsert' });
export type EntityUpsertBody = z.infer<typeof EntityUpsertBody>;

export const EntityEventBody = z
  .strictObject({
    kind: z.enum(ENTITY_EVENT_KINDS),
    content: z.string().max(100_000).optional(),
    task_id: z.string().min(1).max(100).optional().describe("Must be one of the tenant's tasks (else 404)."),
    metadata: z
      .record(z.string().max(200), z.string().max(10_000))
      .refine((m) => Object.keys(m).length <= 50, 'at most 50 metadata keys')
      .optional()
      .describe('String values only.'),
    occurred_at: z.iso.datetime({ offset: true }).optional().describe('Defaults to the time of the request.'),
  })
  .meta({ id: 'EntityEventCreate' });
export type EntityEventBody = z.infer<typeof EntityEventBody>;

// An empty value (`?search=&kind=`) counts as absent; a search of only spaces lists everything too.
export const EntityListQuery = z.strictObject({
  search: z
    .string()
    .trim()
    .max(300)
    .optional()
    .transform((v) => v || undefined),
  kind: blankAsAbsent(z.enum(ENTITY_KINDS).optional()),
  limit: blankAsAbsent(z.coerce.number().int().min(1).max(200).default(50)),
});
export const EntityGetQuery = z.strictObject({
  // The spec's "entity with full event history": every event up to the cap unless the client asks for fewer.
  event_limit: blankAsAbsent(z.coerce.number().int().min(0).max(1000).default(1000)),
});
export const EntityIdParams = z.object({ id: z.string().min(1).max(100) });

export const EntityEvent = z
  .object({
    id: z.string(),
    entity_id: z.string(),
    kind: z.enum(ENTITY_EVENT_KINDS),
    content: z.string().nullable(),
    task_id: z.string().nullable(),
    metadata: z.record(z.string(), z.string()),
    occurred_at: z.string(),
    created_at: z.string(),
  })
  .meta({ id: 'EntityEvent' });
export type EntityEvent = z.infer<typeof EntityEvent>;

export const Entity = z
  .object({
    id: z.string(),
    name: z.string(),
    kind: z.enum(ENTITY_KINDS),
    aliases: z.array(z.string()),
    event_count: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Entity' });
export type Entity = z.infer<typeof Entity>;

export const EntityUpsertResult = Entity.extend({
  created: z.boolean().describe('true when a new entity was made, false when an existing one was updated.'),
  alias_conflicts: z
    .array(z.object({ alias: z.string(), entity_id: z.string() }))
    .describe('Aliases not taken because another entity of the tenant already holds them.'),
}).meta({ id: 'EntityUpsertResult' });

export const EntityWithEvents = Entity.extend({ events: z.array(EntityEvent).describe('Newest first.') }).meta({
  id: 'EntityWithEvents',
});
export const EntityList = z.object({ data: z.array(Entity) }).meta({ id: 'EntityList' });

/** Case- and space-insensitive form used to match names and aliases. */
export function normalizeName(s: string): string {
  return s.normalize('NFKC').trim().replace(/\s+/g, ' ').toLowerCase();
}

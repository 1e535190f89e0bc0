import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { Entity, EntityEvent, normalizeName, type EntityEventBody, type EntityUpsertBody } from '../../schema/entities';
import { notFound } from '../../schema/errors';
import type { Db } from './db';
import { newId } from './ids';

// The rows are the response shapes, column for column.
const EntityRow = Entity;
const EventRow = EntityEvent;
const IdRow = z.object({ id: z.string() });

const ENTITY_SELECT = sql.fragment`
  SELECT e.id, e.name, e.kind,
    coalesce((SELECT array_agg(a.alias ORDER BY a.position, a.alias_norm) FROM entity_aliases a WHERE a.entity_id = e.id AND a.tenant_id = e.tenant_id), '{}') AS aliases,
    (SELECT count(*) FROM entity_events v WHERE v.entity_id = e.id AND v.tenant_id = e.tenant_id)::int8 AS event_count,
    e.created_at, e.updated_at
  FROM entities e`;

async function entityById(db: CommonQueryMethods, tenantId: string, id: string): Promise<Entity | null> {
  return db.maybeOne(sql.type(EntityRow)`${ENTITY_SELECT} WHERE e.id = ${id} AND e.tenant_id = ${tenantId}`);
}

/** Aliases to claim: normalized, deduplicated, without the entity's own name. */
function cleanAliases(aliases: readonly string[], nameNorm: string): Array<{ alias: string; norm: string }> {
  const seen = new Set<string>([nameNorm]);
  const out: Array<{ alias: string; norm: string }> = [];
  for (const a of aliases) {
    const norm = normalizeName(a);
    if (!norm || seen.has(norm)) continue;
    seen.add(norm);
    out.push({ alias: a.trim(), norm });
  }
  return out;
}

/**
 * Creates or updates an entity. With `id`: that entity (404 when unknown), aliases replaced.
 * Without: the tenant's entity whose name, else alias, matches case-insensitively (oldest first)
 * is updated and the aliases given are added; no match creates one. An alias another entity of
 * the tenant already holds stays with that entity and is reported in `alias_conflicts`.
 * @throws AppError not_found
 */
export async function upsertEntity(
  db: Db,
  opts: { tenantId: string; body: EntityUpsertBody },
): Promise<Entity & { created: boolean; alias_conflicts: Array<{ alias: string; entity_id: string }> }> {
  const b = opts.body;
  const nameNorm = normalizeName(b.name);
  return db.transaction(async (tx) => {
    // Serializes upserts of one name in a tenant, so two concurrent creates make one entity.
    await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(hashtextextended(${`${opts.tenantId}/${nameNorm}`}, 4242))`);
    let id: string | null = null;
    if (b.id) {
      id = await tx.maybeOneFirst(
        sql.type(IdRow)`SELECT id FROM entities WHERE id = ${b.id} AND tenant_id = ${opts.tenantId} FOR UPDATE`,
      );
      if (!id) throw notFound('Entity');
    } else {
      id =
        (await tx.maybeOneFirst(sql.type(IdRow)`
          SELECT id FROM entities WHERE tenant_id = ${opts.tenantId} AND name_norm = ${nameNorm}
          ORDER BY created_at, id LIMIT 1 FOR UPDATE`)) ??
        (await tx.maybeOneFirst(sql.type(IdRow)`
          SELECT entity_id AS id FROM entity_aliases WHERE tenant_id = ${opts.tenantId} AND alias_norm = ${nameNorm}`));
    }
    const created = id === null;
    if (id === null) {
      id = newId('ent');
      await tx.query(sql.unsafe`
        INSERT INTO entities (id, tenant_id, name, name_norm, kind)
        VALUES (${id}, ${opts.tenantId}, ${b.name}, ${nameNorm}, ${b.kind ?? 'unknown'})`);
    } else {
      await tx.query(sql.unsafe`
        UPDATE entities SET name = ${b.name}, name_norm = ${nameNorm}, kind = coalesce(${b.kind ?? null}, kind), updated_at = now()
        WHERE id = ${id} AND tenant_id = ${opts.tenantId}`);
      if (b.id && b.aliases) {
        await tx.query(sql.unsafe`DELETE FROM entity_aliases WHERE entity_id = ${id} AND tenant_id = ${opts.tenantId}`);
      }
    }
    const conflicts: Array<{ alias: string; entity_id: string }> = [];
    let position = await tx.oneFirst(sql.type(z.object({ n: z.number().int() }))`
      SELECT coalesce(max(position) + 1, 0)::int8 AS n FROM entity_aliases WHERE entity_id = ${id} AND tenant_id = ${opts.tenantId}`);
    for (const a of cleanAliases(b.aliases ?? [], nameNorm)) {
      const owner: string = await tx.oneFirst(sql.type(IdRow)`
        WITH ins AS (
          INSERT INTO entity_aliases (tenant_id, alias_norm, alias, entity_id, position)
          VALUES (${opts.tenantId}, ${a.norm}, ${a.alias}, ${id}, ${position})
          ON CONFLICT (tenant_id, alias_norm) DO NOTHING RETURNING entity_id)
        SELECT entity_id AS id FROM ins
        UNION ALL
        SELECT entity_id AS id FROM entity_aliases WHERE tenant_id = ${opts.tenantId} AND alias_norm = ${a.norm}
        LIMIT 1`);
      if (owner === id) position++;
      else conflicts.push({ alias: a.alias, entity_id: owner });
    }
    const entity = (await entityById(tx, opts.tenantId, id)) as Entity;
    return { ...entity, created, alias_conflicts: conflicts };
  });
}

function likeEscape(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * Entities of a tenant. `search` matches name and aliases case-insensitively, ranked:
 * exact name, exact alias, name prefix, alias prefix, name substring, alias substring;
 * ties by name. Without search: most recently updated first.
 */
export async function listEntities(
  db: Db,
  opts: { tenantId: string; search?: string; kind?: string; limit: number },
): Promise<readonly Entity[]> {
  const kind = opts.kind ? sql.fragment`AND e.kind = ${opts.kind}` : sql.fragment``;
  if (!opts.search) {
    return db.any(sql.type(EntityRow)`
      ${ENTITY_SELECT} WHERE e.tenant_id = ${opts.tenantId} ${kind} ORDER BY e.updated_at DESC, e.id LIMIT ${opts.limit}`);
  }
  const q = normalizeName(opts.search);
  const prefix = `${likeEscape(q)}%`;
  const infix = `%${likeEscape(q)}%`;
  return db.any(sql.type(EntityRow)`
    WITH hits AS (
      SELECT e.id, min(CASE
          WHEN e.name_norm = ${q} THEN 0
          WHEN a.alias_norm = ${q} THEN 1
          WHEN e.name_norm LIKE ${prefix} ESCAPE '\\' THEN 2
          WHEN a.alias_norm LIKE ${prefix} ESCAPE '\\' THEN 3
          WHEN e.name_norm LIKE ${infix} ESCAPE '\\' THEN 4
          ELSE 5 END) AS rank
      FROM entities e LEFT JOIN entity_aliases a ON a.entity_id = e.id AND a.tenant_id = e.tenant_id
      WHERE e.tenant_id = ${opts.tenantId} ${kind}
        AND (e.name_norm LIKE ${infix} ESCAPE '\\' OR a.alias_norm LIKE ${infix} ESCAPE '\\')
      GROUP BY e.id)
    ${ENTITY_SELECT} JOIN hits h ON h.id = e.id
    ORDER BY h.rank, e.name_norm, e.id LIMIT ${opts.limit}`);
}

/** The most an entity's answer carries of event content and metadata (bytes): its newest events up to this. */
export const ENTITY_EVENT_BYTES = 8 * 1024 * 1024;

/**
 * The entity with its newest `eventLimit` events (newest first), or null. The events stop where their content and
 * metadata would pass ENTITY_EVENT_BYTES (the newest one always comes): `event_count` tells how many there are.
 */
export async function getEntity(
  db: Db,
  opts: { tenantId: string; id: string; eventLimit: number },
): Promise<(Entity & { events: EntityEvent[] }) | null> {
  const entity = await entityById(db, opts.tenantId, opts.id);
  if (!entity) return null;
  const events = await db.any(sql.type(EventRow)`
    SELECT id, entity_id, kind, content, task_id, metadata, occurred_at, created_at FROM (
      SELECT *, sum(size) OVER (ORDER BY occurred_at DESC, created_at DESC, id DESC) - size AS before FROM (
        SELECT id, entity_id, kind, content, task_id, metadata, occurred_at, created_at,
               coalesce(octet_length(content), 0) + octet_length(metadata::text) AS size
        FROM entity_events
        WHERE entity_id = ${opts.id} AND tenant_id = ${opts.tenantId}
        ORDER BY occurred_at DESC, created_at DESC, id DESC LIMIT ${opts.eventLimit}
      ) newest
    ) sized
    WHERE before < ${ENTITY_EVENT_BYTES}
    ORDER BY occurred_at DESC, created_at DESC, id DESC`);
  return { ...entity, events: [...events] };
}

/**
 * Records an event on an entity.
 * @throws AppError not_found (entity, or a task_id that is not the tenant's task)
 */
export async function addEntityEvent(
  db: Db,
  opts: { tenantId: string; entityId: string; body: EntityEventBody },
): Promise<EntityEvent> {
  const b = opts.body;
  return db.transaction(async (tx) => {
    const exists = await tx.exists(
      sql.unsafe`SELECT 1 FROM entities WHERE id = ${opts.entityId} AND tenant_id = ${opts.tenantId}`,
    );
    if (!exists) throw notFound('Entity');
    if (
      b.task_id &&
      !(await tx.exists(sql.unsafe`SELECT 1 FROM tasks WHERE id = ${b.task_id} AND tenant_id = ${opts.tenantId}`))
    ) {
      throw notFound(`Task ${b.task_id}`);
    }
    const event = await tx.one(sql.type(EventRow)`
      INSERT INTO entity_events (id, tenant_id, entity_id, kind, content, task_id, metadata, occurred_at)
      VALUES (${newId('eev')}, ${opts.tenantId}, ${opts.entityId}, ${b.kind}, ${b.content ?? null}, ${b.task_id ?? null},
              ${sql.jsonb(b.metadata ?? {})}, coalesce(${b.occurred_at ?? null}::timestamptz, now()))
      RETURNING id, entity_id, kind, content, task_id, metadata, occurred_at, created_at`);
    await tx.query(
      sql.unsafe`UPDATE entities SET updated_at = now() WHERE id = ${opts.entityId} AND tenant_id = ${opts.tenantId}`,
    );
    return event;
  });
}

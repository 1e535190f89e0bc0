import { sql, type DatabasePool, type FragmentSqlToken } from 'slonik';
import { z } from 'zod';

/**
 * The condition of an OpenAI cursor list (`after` an id, in creation order) over a table keyed by `id` with
 * `created_at` and `tenant_id`, and the order to read it in: rows after the cursor's row in that order (ties on
 * `created_at` broken by id). Table-qualified columns (an output alias `created_at` would be whole seconds).
 * @returns the fragments, or null when `after` is not a row of the tenant (`live` narrows which rows count)
 */
export async function cursorAfter(
  db: DatabasePool,
  o: {
    table: 'files' | 'batches' | 'chat_completions' | 'vector_stores' | 'vector_store_files';
    /** The table's alias in the caller's statement, when it has one. */
    alias?: string;
    tenantId: string;
    after?: string;
    order: 'asc' | 'desc';
    live?: FragmentSqlToken;
  },
): Promise<{ where: FragmentSqlToken; orderBy: FragmentSqlToken } | null> {
  const t = sql.identifier([o.table]);
  const created = sql.identifier([o.alias ?? o.table, 'created_at']);
  const id = sql.identifier([o.alias ?? o.table, 'id']);
  const orderBy =
    o.order === 'asc' ? sql.fragment`${created} ASC, ${id} ASC` : sql.fragment`${created} DESC, ${id} DESC`;
  if (o.after === undefined) return { where: sql.fragment``, orderBy };
  const at = await db.maybeOne(sql.type(z.object({ created_at: z.string(), id: z.string() }))`
    SELECT created_at::text, id FROM ${t}
    WHERE tenant_id = ${o.tenantId} AND id = ${o.after} ${o.live ? sql.fragment`AND ${o.live}` : sql.fragment``}`);
  if (!at) return null;
  const where =
    o.order === 'asc'
      ? sql.fragment`AND (${created}, ${id}) > (${at.created_at}::timestamptz, ${at.id})`
      : sql.fragment`AND (${created}, ${id}) < (${at.created_at}::timestamptz, ${at.id})`;
  return { where, orderBy };
}

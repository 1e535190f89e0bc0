import { sql } from 'slonik';
import { z } from 'zod';
import { createDb } from '../../activities/store/db';
import { freshDatabase } from '../helpers/harness';

const Row = z.object({ n: z.number().int() });
const Prepared = z.object({ name: z.string(), statement: z.string() });

test('a named statement is prepared once per connection and reused; variants of one name get names of their own', async () => {
  const database = await freshDatabase();
  // One connection, so every statement below runs on the same session.
  const db = await createDb({ url: database.url, maxConnections: 1 });
  try {
    await db.connect(async (c) => {
      const one = (extra: boolean, v: number) =>
        c.one(
          sql.prepared('test_variant', Row)`SELECT ${v}::int AS n ${extra ? sql.fragment`WHERE true` : sql.fragment``}`,
        );
      // Same name, two texts: the pg driver alone refuses the second ("Prepared statements must be unique").
      expect(await one(false, 1)).toEqual({ n: 1 });
      expect(await one(true, 2)).toEqual({ n: 2 });
      expect(await one(false, 3)).toEqual({ n: 3 });
      expect(await one(true, 4)).toEqual({ n: 4 });
      const prepared = await c.any(
        sql.type(
          Prepared,
        )`SELECT name, statement FROM pg_prepared_statements WHERE name LIKE 'test_variant_%' ORDER BY statement`,
      );
      // Two prepared statements (one per text), each made once and run twice.
      expect(prepared).toHaveLength(2);
      expect(prepared[0].name).not.toBe(prepared[1].name);
      expect(prepared[0].statement).not.toContain('WHERE true');
      expect(prepared[1].statement).toContain('WHERE true');
      // Unnamed statements stay unnamed.
      await c.one(sql.type(Row)`SELECT 5::int AS n`);
      const count = await c.oneFirst(
        sql.type(z.object({ n: z.number().int() }))`SELECT count(*)::int AS n FROM pg_prepared_statements`,
      );
      expect(count).toBe(2);
    });
    // A row that does not match its schema still fails loudly on a prepared statement.
    await expect(db.one(sql.prepared('test_bad_row', Row)`SELECT 'x'::text AS n`)).rejects.toThrow(
      /does not match its schema/,
    );
  } finally {
    await db.end();
    await database.drop();
  }
});

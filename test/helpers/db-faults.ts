import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';

/**
 * Database faults for tests, made with triggers in the test file's own database (real PostgreSQL, nothing mocked):
 * a slow write holds open the window between two writes; a write that fails the first time leaves what a crash
 * between two writes leaves. The fault lasts while `run` runs and is removed after, whatever happens.
 */

const INSTALL = [
  sql.unsafe`
  CREATE OR REPLACE FUNCTION test_fault_slow() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN PERFORM pg_sleep(TG_ARGV[0]::float8); RETURN NULL; END $$`,
  sql.unsafe`
  CREATE OR REPLACE FUNCTION test_fault_fail_first() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      -- A sequence is not rolled back with the failed write: the retry finds it called.
      IF nextval(quote_ident('test_fault_' || TG_NAME)::regclass) = 1 THEN
        RAISE EXCEPTION 'injected fault (%)', TG_NAME;
      END IF;
      RETURN CASE WHEN TG_LEVEL = 'ROW' THEN NEW END;
    END $$`,
  sql.unsafe`
  CREATE OR REPLACE FUNCTION test_fault_trigger(name text, tbl text, op text, lvl text, cond text, fn text, arg text)
    RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
      EXECUTE format('CREATE TRIGGER %I BEFORE %s ON %I FOR EACH %s %s EXECUTE FUNCTION %I(%L)', name, op, tbl, lvl,
        CASE WHEN cond IS NULL THEN '' ELSE 'WHEN (' || cond || ')' END, fn, arg);
    END $$`,
];

async function withTriggers<T>(
  db: DatabasePool,
  triggers: ReadonlyArray<{
    name: string;
    table: string;
    op: string;
    level: string;
    when?: string;
    fn: string;
    arg: string;
  }>,
  run: () => Promise<T>,
): Promise<T> {
  for (const statement of INSTALL) await db.query(statement);
  for (const t of triggers)
    await db.query(sql.unsafe`
      SELECT test_fault_trigger(${t.name}, ${t.table}, ${t.op}, ${t.level}, ${t.when ?? null}, ${t.fn}, ${t.arg})`);
  try {
    return await run();
  } finally {
    for (const t of triggers)
      await db.query(sql.unsafe`DROP TRIGGER ${sql.identifier([t.name])} ON ${sql.identifier([t.table])}`);
  }
}

/** Every insert into `table` waits `seconds` first (once per statement). */
export function withSlowInserts<T>(
  db: DatabasePool,
  table: string,
  seconds: number,
  run: () => Promise<T>,
): Promise<T> {
  const name = `test_slow_${table}`;
  return withTriggers(
    db,
    [{ name, table, op: 'INSERT', level: 'STATEMENT', fn: 'test_fault_slow', arg: String(seconds) }],
    run,
  );
}

/**
 * The first write of each kind fails: for each `kinds` entry, the first row of `table` written by `op` that matches
 * `when` (an SQL condition on NEW and OLD, `$kind` replaced by the quoted kind) raises an exception; later ones pass.
 * @returns what `run` returned, and the kinds whose fault fired
 */
export async function withFirstWriteFailing<T>(
  db: DatabasePool,
  o: { table: string; op: 'INSERT' | 'UPDATE'; when: string; kinds: readonly string[] },
  run: () => Promise<T>,
): Promise<{ result: T; fired: string[] }> {
  const triggers = o.kinds.map((kind, i) => ({
    name: `test_fail_${o.table}_${i}`,
    table: o.table,
    op: o.op,
    level: 'ROW',
    when: o.when.replaceAll('$kind', `'${kind.replaceAll("'", "''")}'`),
    fn: 'test_fault_fail_first',
    arg: kind,
  }));
  for (const t of triggers) {
    const seq = sql.identifier([`test_fault_${t.name}`]);
    await db.query(sql.unsafe`CREATE SEQUENCE IF NOT EXISTS ${seq}`);
    await db.query(sql.unsafe`ALTER SEQUENCE ${seq} RESTART`);
  }
  const result = await withTriggers(db, triggers, run);
  const fired: string[] = [];
  for (const [i, t] of triggers.entries()) {
    const called = await db.oneFirst(sql.type(z.object({ is_called: z.boolean() }))`
      SELECT is_called FROM ${sql.identifier([`test_fault_${t.name}`])}`);
    if (called) fired.push(o.kinds[i]);
  }
  return { result, fired };
}

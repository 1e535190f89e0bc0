import pg from 'pg';
import { runMigrations, migrationsDir } from '../../activities/store/migrate';
import { readdirSync } from 'node:fs';
import { freshDatabase } from '../helpers/harness';

test('migrations are recorded and idempotent, also when run concurrently', async () => {
  const db = await freshDatabase(); // already migrated once
  try {
    const again = await Promise.all([runMigrations(db.url), runMigrations(db.url)]);
    expect(again.map((a) => a.applied)).toEqual([[], []]);
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    const rows = (await c.query('SELECT name FROM schema_migrations ORDER BY name')).rows.map((r) => r.name);
    const files = readdirSync(migrationsDir())
      .filter((f) => f.endsWith('.sql'))
      .sort();
    expect(rows).toEqual(files);
    const t = await c.query("SELECT to_regclass('public.api_keys') AS t");
    expect(t.rows[0].t).toBe('api_keys');
    await c.end();
  } finally {
    await db.drop();
  }
});

test('a failing migration rolls back and is not recorded', async () => {
  const db = await freshDatabase();
  const { mkdtempSync, writeFileSync } = await import('node:fs');
  const dir = mkdtempSync('/tmp/mig-');
  writeFileSync(`${dir}/9999_bad.sql`, 'CREATE TABLE half_done (id int); SELECT * FROM no_such_table;');
  try {
    await expect(runMigrations(db.url, dir)).rejects.toThrow(/9999_bad.sql/);
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    expect((await c.query("SELECT to_regclass('public.half_done') AS t")).rows[0].t).toBeNull();
    expect(
      (await c.query("SELECT count(*)::int AS n FROM schema_migrations WHERE name = '9999_bad.sql'")).rows[0].n,
    ).toBe(0);
    await c.end();
  } finally {
    await db.drop();
  }
});

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';

/** Finds schema/migrations from source (ts-jest/swc) and from dist/ alike. */
export function migrationsDir(): string {
  const candidates = [
    path.resolve(__dirname, '../../schema/migrations'),
    path.resolve(__dirname, '../../../schema/migrations'),
  ];
  const found = candidates.find((d) => existsSync(d));
  if (!found) throw new Error(`schema/migrations not found (looked in ${candidates.join(', ')})`);
  return found;
}

/**
 * Creates the database named in `url` when it does not exist (connecting to the server's
 * `postgres` database to do it). Safe to race with another process.
 */
export async function ensureDatabase(url: string): Promise<{ created: boolean }> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.replace(/^\//, '')) || 'postgres';
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString(), connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    const r = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (r.rowCount) return { created: false };
    try {
      await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
      return { created: true };
    } catch (err) {
      if ((err as { code?: string }).code === '42P04') return { created: false };
      throw err;
    }
  } finally {
    await client.end();
  }
}

/**
 * Applies every `schema/migrations/*.sql` not yet recorded in `schema_migrations`, each in
 * its own transaction, under an advisory lock so concurrent starters apply each file once.
 */
export async function runMigrations(url: string, dir = migrationsDir()): Promise<{ applied: string[] }> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await client.connect();
  const applied: string[] = [];
  try {
    await client.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    await client.query('SELECT pg_advisory_lock(7426001)');
    try {
      const done = new Set(
        (await client.query<{ name: string }>('SELECT name FROM schema_migrations')).rows.map((r) => r.name),
      );
      const files = readdirSync(dir)
        .filter((f) => f.endsWith('.sql'))
        .sort();
      for (const file of files) {
        if (done.has(file)) continue;
        const text = readFileSync(path.join(dir, file), 'utf8');
        await client.query('BEGIN');
        try {
          await client.query(text);
          await client.query('INSERT INTO schema_migrations (name) VALUES ($1)', [file]);
          await client.query('COMMIT');
          applied.push(file);
        } catch (err) {
          await client.query('ROLLBACK');
          throw new Error(`Migration ${file} failed: ${(err as Error).message}`, { cause: err });
        }
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock(7426001)');
    }
  } finally {
    await client.end();
  }
  return { applied };
}

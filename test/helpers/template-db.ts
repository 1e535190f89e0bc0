import pg from 'pg';
import { randomToken } from '../../activities/store/ids';
import { ensureDatabase, runMigrations } from '../../activities/store/migrate';

/** PostgreSQL's "source database is being accessed by other users": a copy raced a connection to the template. */
const TEMPLATE_BUSY = '55006';

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

async function onAdmin<T>(base: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: `${base}/postgres` });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/**
 * Once per Jest run (global setup): a database migrated once that every test file's database is
 * copied from. Its name carries the run's pid, so concurrent runs never share or drop each other's.
 */
export async function createTemplateDatabase(base: string): Promise<string> {
  const name = `svc_tmpl_${process.pid}_${randomToken(10)}`;
  await ensureDatabase(`${base}/${name}`);
  await runMigrations(`${base}/${name}`);
  return name;
}

/** `CREATE DATABASE … TEMPLATE …`: a file copy of the migrated schema, much cheaper than migrating. */
export async function cloneDatabase(base: string, template: string, name: string): Promise<void> {
  await onAdmin(base, async (c) => {
    for (let attempt = 1; ; attempt++) {
      try {
        await c.query(`CREATE DATABASE ${quote(name)} TEMPLATE ${quote(template)}`);
        return;
      } catch (err) {
        // Only the migrating connection ever touches the template; retry the rare overlap with its close.
        if ((err as { code?: string }).code !== TEMPLATE_BUSY || attempt >= 20) throw err;
        await new Promise((r) => setTimeout(r, 50 * attempt));
      }
    }
  });
}

export async function dropDatabase(base: string, name: string): Promise<void> {
  await onAdmin(base, (c) => c.query(`DROP DATABASE IF EXISTS ${quote(name)} WITH (FORCE)`));
}

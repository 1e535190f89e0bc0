import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../schema/config';
import { ensureDatabase, runMigrations } from '../activities/store/migrate';
import { freePort } from './temporal-dev';

export interface PreparedDatabase {
  url: string;
  /** 1 for the embedded PGlite fallback (it is not safe with concurrent connections). */
  maxConnections: number;
  embedded: boolean;
  stop(): Promise<void>;
}

function isUnreachable(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return ['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ETIMEDOUT', 'ENOENT'].includes(code ?? '') ||
    /timeout|ECONNREFUSED/i.test((err as Error).message ?? '');
}

/**
 * Makes the database ready: creates it when missing and applies migrations. When no server
 * answers and DATABASE_URL was not given, falls back to an embedded PGlite under SVC_DATA_DIR.
 * @throws when the server refuses, or DATABASE_URL was given and does not answer
 */
export async function prepareDatabase(config: Config, log: Logger): Promise<PreparedDatabase> {
  try {
    const { created } = await ensureDatabase(config.databaseUrl);
    if (created) log.info({ database: new URL(config.databaseUrl).pathname.slice(1) }, 'database created');
    const { applied } = await runMigrations(config.databaseUrl);
    log.info({ applied }, applied.length ? 'migrations applied' : 'migrations up to date');
    return { url: config.databaseUrl, maxConnections: 10, embedded: false, stop: async () => {} };
  } catch (err) {
    if (config.databaseUrlExplicit || !isUnreachable(err)) throw err;
    log.warn({ err: (err as Error).message }, 'no PostgreSQL answers at the default address; using embedded PGlite');
  }
  const dir = path.resolve(config.dataDir, 'pglite');
  mkdirSync(dir, { recursive: true });
  const { PGlite } = await import('@electric-sql/pglite');
  const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
  const pglite = await PGlite.create(dir);
  const port = await freePort();
  const server = new PGLiteSocketServer({ db: pglite, host: '127.0.0.1', port, maxConnections: 2 });
  await server.start();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  log.warn({ dir }, 'embedded PGlite database in use: for development only (one connection, no concurrency)');
  const { applied } = await runMigrations(url);
  log.info({ applied }, 'migrations applied to PGlite');
  return {
    url,
    maxConnections: 1,
    embedded: true,
    stop: async () => {
      await server.stop();
      await pglite.close();
    },
  };
}

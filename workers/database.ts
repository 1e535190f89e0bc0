import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import type { Logger } from 'pino';
import { ConfigError, type Config } from '../schema/config';
import { ensureDatabase, runMigrations } from '../activities/store/migrate';
import { freePort } from './temporal-dev';

export interface PreparedDatabase {
  url: string;
  /** 1 for the embedded PGlite fallback (it is not safe with concurrent connections). */
  maxConnections: number;
  embedded: boolean;
  stop(): Promise<void>;
}

/** Whether `err` says no database server answers at the address (refused, unknown host, timeout, no socket). */
export function isUnreachable(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return (
    ['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ETIMEDOUT', 'ENOENT'].includes(code ?? '') ||
    /timeout|ECONNREFUSED/i.test((err as Error).message ?? '')
  );
}

/** Where `npm start` publishes the socket URL of its embedded PGlite, for the operator CLIs. */
export function pgliteUrlFile(dataDir: string): string {
  return path.resolve(dataDir, 'pglite.url');
}

/** The PGlite URL a running `npm start` published under `dataDir`, if any. */
export function publishedPgliteUrl(dataDir: string): string | undefined {
  try {
    const url = readFileSync(pgliteUrlFile(dataDir), 'utf8').trim();
    return /^postgres(ql)?:\/\//.test(url) ? url : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a PostgreSQL server (or a PGlite socket) accepts a connection at `url`. */
export async function databaseAnswers(url: string, timeoutMs = 3000): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

export interface PrepareDatabaseOptions {
  /**
   * Fall back to an embedded PGlite when no server answers at the default address (only `npm start`:
   * the API and worker entries are separate processes, and two processes on one PGlite directory
   * corrupt it).
   */
  embeddedFallback: boolean;
}

/**
 * Makes the database ready: creates it when missing and applies migrations. When no server
 * answers, DATABASE_URL was not given and `embeddedFallback` is on, falls back to an embedded
 * PGlite under SVC_DATA_DIR and publishes its socket URL in `<SVC_DATA_DIR>/pglite.url` (removed on stop).
 * @throws ConfigError when no server answers and the fallback is off or another process uses the PGlite;
 *   the driver's error when the server refuses, or DATABASE_URL was given and does not answer
 */
export async function prepareDatabase(
  config: Config,
  log: Logger,
  opts: PrepareDatabaseOptions,
): Promise<PreparedDatabase> {
  try {
    const { created } = await ensureDatabase(config.databaseUrl);
    if (created) log.info({ database: new URL(config.databaseUrl).pathname.slice(1) }, 'database created');
    const { applied } = await runMigrations(config.databaseUrl);
    log.info({ applied }, applied.length ? 'migrations applied' : 'migrations up to date');
    return { url: config.databaseUrl, maxConnections: 10, embedded: false, stop: async () => {} };
  } catch (err) {
    if (config.databaseUrlExplicit || !isUnreachable(err)) throw err;
    if (!opts.embeddedFallback) {
      const where = new URL(config.databaseUrl);
      throw new ConfigError(
        `No PostgreSQL answers at ${where.host} (${(err as { code?: string }).code ?? (err as Error).message}). ` +
          'The API and worker entries need a PostgreSQL server: start one there or set DATABASE_URL. ' +
          '(The embedded PGlite fallback is only for npm start, which runs API and worker in one process.)',
      );
    }
    log.warn({ err: (err as Error).message }, 'no PostgreSQL answers at the default address; using embedded PGlite');
  }
  const dir = path.resolve(config.dataDir, 'pglite');
  const urlFile = pgliteUrlFile(config.dataDir);
  const running = publishedPgliteUrl(config.dataDir);
  if (running && (await databaseAnswers(running))) {
    throw new ConfigError(
      `Another process already serves the embedded PGlite database in ${dir} (${running}); stop it first, or set DATABASE_URL.`,
    );
  }
  mkdirSync(dir, { recursive: true });
  const { PGlite } = await import('@electric-sql/pglite');
  const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
  const pglite = await PGlite.create(dir);
  const port = await freePort();
  // The service holds one pooled connection and one LISTEN connection; the rest is for operator CLIs.
  const server = new PGLiteSocketServer({ db: pglite, host: '127.0.0.1', port, maxConnections: 6 });
  await server.start();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  log.warn({ dir }, 'embedded PGlite database in use: for development only (one connection, no concurrency)');
  const { applied } = await runMigrations(url);
  log.info({ applied }, 'migrations applied to PGlite');
  writeFileSync(urlFile, `${url}\n`);
  return {
    url,
    maxConnections: 1,
    embedded: true,
    stop: async () => {
      if (publishedPgliteUrl(config.dataDir) === url) rmSync(urlFile, { force: true });
      await server.stop();
      await pglite.close();
    },
  };
}

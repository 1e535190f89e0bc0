import { createDb, type Db } from '../activities/store/db';
import { ensureDatabase, runMigrations } from '../activities/store/migrate';
import { parseConfig, type Config } from '../schema/config';
import { databaseAnswers, isUnreachable, pgliteUrlFile, publishedPgliteUrl } from './database';

/** Where an operator command reads its environment and writes its output (tests pass their own). */
export interface CliIo {
  env: Record<string, string | undefined>;
  out: (s: string) => void;
  err: (s: string) => void;
}

/** A mistake in the command line: reported with the usage text, exit code 2. */
export class UsageError extends Error {}

/** Prints one JSON result to the command's output. */
export type Print = (value: unknown) => void;

/**
 * Runs one operator command with `io`: results go to `out` as JSON, errors to `err` (with the usage
 * text for usage errors and unparseable options).
 * @returns the process exit code (0 ok, 2 usage error, 1 failure)
 */
export async function runCommand(
  argv: string[],
  io: CliIo,
  usage: string,
  command: (argv: string[], env: CliIo['env'], print: Print) => Promise<void>,
): Promise<number> {
  try {
    await command(argv, io.env, (value) => io.out(`${JSON.stringify(value, null, 2)}\n`));
    return 0;
  } catch (e) {
    const err = e as Error;
    const isUsage = err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    io.err(isUsage ? `error: ${err.message}\n${usage}\n` : `error: ${err.message}\n`);
    return isUsage ? 2 : 1;
  }
}

/**
 * The database an operator command works on: DATABASE_URL when given; else the embedded PGlite a
 * running `npm start` published under SVC_DATA_DIR (the service's own database) when it answers;
 * else the default server.
 */
export async function commandDatabase(config: Config): Promise<{ url: string; embedded: boolean }> {
  if (!config.databaseUrlExplicit) {
    const published = publishedPgliteUrl(config.dataDir);
    if (published && (await databaseAnswers(published))) return { url: published, embedded: true };
  }
  return { url: config.databaseUrl, embedded: false };
}

/**
 * Runs `fn` on the command's database (see `commandDatabase`; a server database is created and
 * migrated when needed; works while the service runs), then closes it.
 * @throws Error saying what to start or set when no database answers
 */
export async function withCommandDb<T>(env: CliIo['env'], fn: (db: Db) => Promise<T>): Promise<T> {
  const config = parseConfig(env);
  const { url, embedded } = await commandDatabase(config);
  if (!embedded) {
    try {
      await ensureDatabase(url);
    } catch (err) {
      if (config.databaseUrlExplicit || !isUnreachable(err)) throw err;
      const code = (err as { code?: string }).code ?? '';
      throw new Error(
        `no PostgreSQL answers at ${new URL(url).host} (${code}), and no running npm start published an embedded ` +
          `database in ${pgliteUrlFile(config.dataDir)}. Start the service (npm start) or set DATABASE_URL.`,
        { cause: err },
      );
    }
    await runMigrations(url);
  }
  const db = await createDb({ url, maxConnections: 1 });
  try {
    return await fn(db);
  } finally {
    await db.end();
  }
}

/** Entry-file glue: runs a CLI on this process's arguments and streams, and sets the exit code. */
export function runAsProcess(cli: (argv: string[], io: CliIo) => Promise<number>): void {
  cli(process.argv.slice(2), {
    env: process.env,
    out: (s) => process.stdout.write(s),
    err: (s) => process.stderr.write(s),
  }).then(
    (code) => {
      process.exitCode = code;
    },
    (err: Error) => {
      console.error(err.message);
      process.exitCode = 1;
    },
  );
}

import { createDb, type Db } from '../activities/store/db';
import { ensureDatabase, runMigrations } from '../activities/store/migrate';
import { parseConfig } from '../schema/config';

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

/** Runs `fn` on the DATABASE_URL database (created and migrated when needed; works while the service runs), then closes it. */
export async function withCommandDb<T>(env: CliIo['env'], fn: (db: Db) => Promise<T>): Promise<T> {
  const config = parseConfig(env);
  await ensureDatabase(config.databaseUrl);
  await runMigrations(config.databaseUrl);
  const db = await createDb({ url: config.databaseUrl, maxConnections: 1 });
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

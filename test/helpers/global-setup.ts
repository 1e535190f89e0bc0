import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { bundleWorkflowCode } from '@temporalio/worker';
import {
  findOrBuildTemporalCli,
  freePort,
  startDevServer,
  startSdkDevServer,
  TEMPORAL_CLI_VERSION,
} from '../../workers/temporal-dev';
import { createTemplateDatabase } from './template-db';
import { processAlive } from './processes';

export const TMP_DIR = path.resolve(__dirname, '../../.test-tmp');
/** Per run, so concurrent Jest runs on one checkout never read each other's server address. */
export const ENV_FILE = path.join(TMP_DIR, `env-${process.pid}.json`);
/** History length at which the test server suggests continue-as-new (production default: 4096). */
export const CONTINUE_AS_NEW_AFTER_EVENTS = 150;

/**
 * Once per Jest run: one real Temporal dev server (in memory, on a free port) and one
 * workflow bundle that every test worker reuses.
 */
export default async function globalSetup(): Promise<void> {
  mkdirSync(TMP_DIR, { recursive: true });
  await dropStaleDatabases();
  // Migrated once; every test file's database is a copy (test/helpers/template-db.ts).
  const templateBase = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432';
  const templateDb = await createTemplateDatabase(templateBase);
  const log = pino({ level: 'warn' });
  let address = process.env.TEST_TEMPORAL_ADDRESS;
  if (!address) {
    const server = await startTestTemporal(log);
    (globalThis as { __temporalServer?: typeof server }).__temporalServer = server;
    address = server.address;
  }
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('../../workflows'),
    logger: { info() {}, warn() {}, error: console.error, debug() {}, trace() {}, log() {} } as never,
  });
  const bundlePath = path.join(TMP_DIR, `workflow-bundle-${process.pid}.js`);
  writeFileSync(bundlePath, code);
  writeFileSync(ENV_FILE, JSON.stringify({ temporalAddress: address, bundlePath, templateDb, templateBase }));
  // Test workers are spawned after this and inherit the variable.
  process.env.SVC_TEST_ENV_FILE = ENV_FILE;
}

/**
 * The test Temporal server (in memory, free port, low continue-as-new threshold): the `temporal` CLI
 * when one is found or built, else the dev server the Temporal SDK downloads itself.
 * @throws Error listing every attempt when neither starts
 */
async function startTestTemporal(log: pino.Logger): Promise<{ address: string; stop(): Promise<void> }> {
  const port = await freePort();
  // Suggest continue-as-new early, so long-lived workflows exercise it in ordinary tests.
  const dynamicConfig = { 'limit.historyCount.suggestContinueAsNew': CONTINUE_AS_NEW_AFTER_EVENTS };
  const found = await findOrBuildTemporalCli({ cliPath: process.env.TEMPORAL_CLI_PATH, log });
  if (found.path !== null) {
    return startDevServer({
      cli: found.path,
      port,
      namespace: 'default',
      logFile: path.join(TMP_DIR, `temporal-${process.pid}.log`),
      dynamicConfig,
      log,
    });
  }
  log.warn({ attempts: found.attempts }, 'no Temporal CLI found or built: trying the SDK dev-server download');
  try {
    return await startSdkDevServer({ port, namespace: 'default', dynamicConfig, log });
  } catch (err) {
    throw new Error(
      'No Temporal server for the tests. Tried:\n  - ' +
        [...found.attempts, `SDK dev-server download: ${(err as Error).message.split('\n')[0]}`].join('\n  - ') +
        `\nInstall the CLI (GOBIN=${found.bin} go install github.com/temporalio/cli/cmd/temporal@${TEMPORAL_CLI_VERSION}), ` +
        'set TEMPORAL_CLI_PATH to an existing binary, or set TEST_TEMPORAL_ADDRESS to a running server.',
      { cause: err },
    );
  }
}

/**
 * Databases left by killed runs. A name carries its creator's pid (`svc_test_<pid>_<token>`, templates
 * `svc_tmpl_<pid>_<token>`): dropped once
 * that process is gone and nobody is connected, so a concurrent run's databases are never touched.
 */
async function dropStaleDatabases(): Promise<void> {
  const base = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432';
  const c = new pg.Client({ connectionString: `${base}/postgres` });
  await c.connect();
  try {
    const { rows } = await c.query<{ datname: string }>(
      `SELECT d.datname FROM pg_database d
        WHERE (d.datname LIKE 'svc\\_test\\_%' OR d.datname LIKE 'svc\\_bench\\_%' OR d.datname LIKE 'svc\\_tmpl\\_%')
         AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.datname = d.datname)`,
    );
    for (const { datname } of rows) {
      const pid = /^svc_(?:test|bench|tmpl)_(\d+)_/.exec(datname)?.[1];
      if (pid && processAlive(Number(pid))) continue;
      await c.query(`DROP DATABASE IF EXISTS "${datname}"`).catch(() => undefined);
    }
  } finally {
    await c.end();
  }
}

import { readFileSync, rmSync } from 'node:fs';
import { dropDatabase } from './template-db';

export default async function globalTeardown(): Promise<void> {
  const server = (globalThis as { __temporalServer?: { stop(): Promise<void> } }).__temporalServer;
  if (server) await server.stop();
  const envFile = process.env.SVC_TEST_ENV_FILE;
  if (envFile) {
    let env: { bundlePath?: string; templateDb?: string; templateBase?: string } = {};
    try {
      env = JSON.parse(readFileSync(envFile, 'utf8'));
    } catch {
      env = {}; // already gone or unreadable: nothing to remove but the file itself
    }
    if (env.bundlePath) rmSync(env.bundlePath, { force: true });
    // A failed drop is left to the next run's stale-database sweep (the name carries this run's pid).
    if (env.templateDb && env.templateBase) await dropDatabase(env.templateBase, env.templateDb).catch(() => undefined);
    rmSync(envFile, { force: true });
  }
}

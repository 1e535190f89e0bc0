import { rmSync } from 'node:fs';

export default async function globalTeardown(): Promise<void> {
  const server = (globalThis as { __temporalServer?: { stop(): Promise<void> } }).__temporalServer;
  if (server) await server.stop();
  const envFile = process.env.SVC_TEST_ENV_FILE;
  if (envFile) {
    rmSync(envFile.replace(/env-(\d+)\.json$/, 'workflow-bundle-$1.js'), { force: true });
    rmSync(envFile, { force: true });
  }
}

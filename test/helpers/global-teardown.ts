import { readFileSync, rmSync } from 'node:fs';

export default async function globalTeardown(): Promise<void> {
  const server = (globalThis as { __temporalServer?: { stop(): Promise<void> } }).__temporalServer;
  if (server) await server.stop();
  const envFile = process.env.SVC_TEST_ENV_FILE;
  if (envFile) {
    let bundlePath: string | undefined;
    try {
      ({ bundlePath } = JSON.parse(readFileSync(envFile, 'utf8')) as { bundlePath?: string });
    } catch {
      bundlePath = undefined; // already gone or unreadable: nothing to remove but the file itself
    }
    if (bundlePath) rmSync(bundlePath, { force: true });
    rmSync(envFile, { force: true });
  }
}

import { execFileSync } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

/** Libraries only some requests need: loaded on first use (activities/lazy-module.ts), not at start. */
const HEAVY = ['mathjs', 'linkedom', 'sharp', 'mammoth', 'nodemailer', '@modelcontextprotocol/sdk/dist/cjs/server'];

/**
 * Loads the API app and the activities in a fresh process (or the given modules), runs `then`, and lists
 * which of `heavy` were loaded.
 */
function loadedAfter(then: string, heavy = HEAVY, modules = ['./api/app', './activities']): string[] {
  const script = `
    ${modules.map((m) => `require(${JSON.stringify(m)});`).join('\n')}
    ${then}
    const loaded = Object.keys(require.cache);
    const heavy = ${JSON.stringify(heavy)};
    process.stdout.write(JSON.stringify(heavy.filter((h) => loaded.some((f) => f.includes('/node_modules/' + h + '/')))));
  `;
  const out = execFileSync(process.execPath, ['-r', path.join(ROOT, 'bin/ts-register.js'), '-e', script], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return JSON.parse(out) as string[];
}

describe('heavy libraries load on first use', () => {
  it('starting the API and the activities loads none of them', () => {
    expect(loadedAfter('')).toEqual([]);
  });

  it('the calculator loads mathjs when it first runs, and answers', () => {
    const loaded = loadedAfter(`
      const r = require('./activities/commons').runCommonsTool('calculator', JSON.stringify({ expression: '2 + 3 * 4' }));
      if (JSON.parse(r.content).result !== '14') throw new Error('calculator: ' + r.content);
    `);
    expect(loaded).toEqual(['mathjs']);
  });

  it("an API-only process (`npm run api`) does not load the Temporal worker SDK or its bundler; a worker's does", () => {
    const worker = ['@temporalio/worker', '@temporalio/core-bridge', 'webpack'];
    expect(loadedAfter('', worker, ['./workers/runtime', './workers/database', './workers/api-cluster'])).toEqual([]);
    expect(loadedAfter('', worker, ['./workers/runtime-worker'])).toEqual(worker);
  });
});

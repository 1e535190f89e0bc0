import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startHarness, type Harness } from '../helpers/harness';
import { keyProxy } from './mcp-helpers';

const run = promisify(execFile);
const CLI = path.join(__dirname, '../../node_modules/@modelcontextprotocol/conformance/dist/index.js');

let h: Harness;
let proxy: { url: string; close(): Promise<void> };
let outDir: string;
beforeAll(async () => {
  h = await startHarness();
  proxy = await keyProxy(h.url, (await h.key(['runtime:chat'])).apiKey);
  outDir = mkdtempSync(path.join(os.tmpdir(), 'mcp-conformance-'));
}, 120_000);
afterAll(async () => {
  await proxy?.close();
  await h?.close();
  if (outDir) rmSync(outDir, { recursive: true, force: true });
});

/**
 * The suite's server scenarios that apply to this server. The others call fixture tools
 * (test_simple_text, test_image_content, ...) or features we do not offer (prompts, resources,
 * logging, completion); see docs/decisions.md.
 */
const APPLICABLE = [
  'server-initialize',
  'ping',
  'tools-list',
  'dns-rebinding-protection',
  'server-sse-polling',
  'server-sse-multiple-streams',
];

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
}

test.each(APPLICABLE)(
  'conformance scenario %s passes',
  async (scenario) => {
    const dir = path.join(outDir, scenario);
    // process.execPath is the project's Node 24 (the runner needs Node >= 22).
    await run(process.execPath, [CLI, 'server', '--url', `${proxy.url}/v1/mcp`, '--scenario', scenario, '-o', dir], {
      timeout: 120_000,
    }).catch((e) => e);
    const runs = readdirSync(dir);
    expect(runs.length).toBe(1);
    const checks = JSON.parse(readFileSync(path.join(dir, runs[0], 'checks.json'), 'utf8')) as Check[];
    const failed = checks.filter((c) => c.status === 'FAILURE').map((c) => `${c.id}: ${c.errorMessage}`);
    expect(failed).toEqual([]);
    // Stateless servers have no resumable streams: those two scenarios may only skip or pass.
    if (!scenario.startsWith('server-sse'))
      expect(checks.filter((c) => c.status === 'SUCCESS').length).toBeGreaterThan(0);
  },
  150_000,
);

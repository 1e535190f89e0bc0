import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { FakeOpenAI } from '../helpers/fake-openai';
import { withFakeUpstream } from '../helpers/fake-upstream';
import { testEnv, type Harness } from '../helpers/harness';
import pino from 'pino';
import { startBrowserWorkers, type BrowserWorkers } from '../../workers/browser-worker';

const ROOT = path.resolve(__dirname, '../..');
const TOUR = readFileSync(path.join(ROOT, 'docs/tour.md'), 'utf8');

interface Block {
  lang: 'sh' | 'js';
  code: string;
}

/** The tour's runnable blocks (```sh and ```js), grouped by their `## ` section. `console` blocks are not run. */
export function tourSections(text: string): Array<{ title: string; blocks: Block[] }> {
  const sections: Array<{ title: string; blocks: Block[] }> = [];
  const fence = /^```(\w*)\n([\s\S]*?)^```$/gm;
  const headings = [...text.matchAll(/^## (.+)$/gm)].map((m) => ({ title: m[1], at: m.index }));
  for (const m of text.matchAll(fence)) {
    const lang = m[1];
    if (lang !== 'sh' && lang !== 'js') continue;
    const heading = headings.filter((hd) => hd.at < m.index).at(-1);
    if (!heading) throw new Error('a runnable block before the first section');
    let section = sections.find((s) => s.title === heading.title);
    if (!section) sections.push((section = { title: heading.title, blocks: [] }));
    section.blocks.push({ lang, code: m[2] });
  }
  return sections;
}

let fake: FakeOpenAI;
let h: Harness;
let key: string;
const ALL_SCOPES = [
  'runtime:chat',
  'runtime:models',
  'runtime:spaces',
  'runtime:workspaces',
  'runtime:records',
  'runtime:email:send',
];
// The browser section needs a browser worker (Debian's Chromium). Declared before the harness's own afterAll so the
// worker stops while the database and Temporal are still there (afterAll hooks run in declaration order).
let bw: BrowserWorkers | undefined;
afterAll(async () => {
  await bw?.stop();
}, 60_000);
// The web snippets fetch a real page served here (PAGE); loopback is allowed for that, metadata addresses never are.
withFakeUpstream(
  {
    worker: true,
    scopes: ALL_SCOPES,
    env: { SVC_ALLOW_PRIVATE_FETCH: 'true' },
    resetEach: { reply: 'Otters are social and playful.' },
  },
  (up) => ({ fake, h, key } = up),
);

const ARTICLE = `<!doctype html><html lang="en"><head><title>Sea otters</title></head><body><nav>Home | About</nav>
<article><h1>Sea otters</h1><p>Sea otters hold hands while they sleep so that they do not drift apart.</p>
<p>They use stones as tools to open shells, and they keep a favourite stone in a pouch of loose skin.</p></article>
<footer>Copyright</footer></body></html>`;
beforeAll(async () => {
  bw = await startBrowserWorkers({
    config: h.config,
    db: h.db,
    log: pino({ level: 'silent' }),
    address: testEnv().temporalAddress,
    taskQueue: h.taskQueue,
  });
}, 120_000);

let page: http.Server;
let pageUrl: string;
beforeAll(async () => {
  page = http.createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(ARTICLE),
  );
  await new Promise<void>((r) => page.listen(0, '127.0.0.1', r));
  pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}/otters`;
});
afterAll(() => new Promise<void>((r) => page.close(() => r())));

/** Runs one block as a person would paste it: sh through bash (fail fast), js as an ES module beside our node_modules. */
function run(block: Block, env: Record<string, string>): Promise<{ code: number | null; out: string; err: string }> {
  const [cmd, args] =
    block.lang === 'sh'
      ? ['bash', ['-c', `set -euxo pipefail\n${block.code}`]]
      : [process.execPath, ['--input-type=module', '-e', block.code]];
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: ROOT, env: { ...process.env, ...env } });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('close', (code) => resolve({ code, out, err }));
  });
}

const sections = tourSections(TOUR);

test('the tour covers the capability families, each with a runnable block', () => {
  expect(sections.map((s) => s.title)).toEqual(
    expect.arrayContaining([
      'Chat',
      'Tasks: a step DAG, streamed',
      'Goals and ticks',
      'Structured reasoning',
      'Knowledge',
      'Web',
      'Browser',
      'Tools and MCP',
      'Agents and tool plans',
      'Live events',
    ]),
  );
  for (const s of sections) expect(s.blocks.length).toBeGreaterThan(0);
});

describe.each(sections.map((s) => [s.title, s] as const))('tour: %s', (_title, section) => {
  test('every block runs as written against the real service', async () => {
    const before = fake.chats.length;
    // The sh blocks of a section share their variables, as they would in one terminal.
    const sh = section.blocks
      .filter((b) => b.lang === 'sh')
      .map((b) => b.code)
      .join('\n');
    const blocks: Block[] = [
      ...(sh ? [{ lang: 'sh' as const, code: sh }] : []),
      ...section.blocks.filter((b) => b.lang === 'js'),
    ];
    for (const block of blocks) {
      const r = await run(block, { BASE: h.url, KEY: key, PAGE: pageUrl });
      // On failure the block's own output says which command stopped.
      expect({ code: r.code, output: r.code === 0 ? '' : `${r.out}\n${r.err}` }).toEqual({ code: 0, output: '' });
    }
    // Chat snippets really reached the model through the gateway.
    if (section.title === 'Chat') expect(fake.chats.length - before).toBeGreaterThanOrEqual(4);
    // The agent run's answer came from the model (one turn at least), not from a stub.
    if (section.title === 'Agents and tool plans') expect(fake.chats.length - before).toBeGreaterThanOrEqual(1);
  });
});

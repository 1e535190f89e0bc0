import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { mintDevKey } from '../../workers/ready-banner';
import { startHarness, type Harness } from '../helpers/harness';

const ROOT = path.resolve(__dirname, '../..');
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h?.close());

const log = pino({ level: 'silent' });

test('a dev key is minted on loopback with every scope, and works on scoped routes', async () => {
  const dev = await mintDevKey({ db: h.db, host: '127.0.0.1', log });
  expect(dev?.apiKey).toMatch(/^svc\./);
  const info = await h.req('GET', '/v1/key', { key: dev!.apiKey });
  expect(info.status).toBe(200);
  expect(info.body.scopes).toEqual(
    expect.arrayContaining([
      'runtime:chat',
      'runtime:spaces',
      'runtime:workspaces',
      'runtime:records',
      'runtime:email:send',
    ]),
  );
  expect((await h.req('GET', '/v1/spaces', { key: dev!.apiKey })).status).toBe(200);
});

test('no dev key when the service listens beyond loopback', async () => {
  for (const host of ['0.0.0.0', '::', '10.1.2.3']) expect(await mintDevKey({ db: h.db, host, log })).toBeUndefined();
});

test('the production entries never mint a dev key (only the all-in-one npm start does)', () => {
  for (const entry of ['workers/api.ts', 'workers/worker.ts'])
    expect(readFileSync(path.join(ROOT, entry), 'utf8')).not.toMatch(/mintDevKey|devKey|dev-key/);
  expect(readFileSync(path.join(ROOT, 'workers/main.ts'), 'utf8')).toMatch(/mintDevKey/);
});

test('the operator CLI runs on a fresh clone without a build step (from source)', async () => {
  const child = spawn(
    process.execPath,
    [path.join(ROOT, 'bin/svc-cli.js'), 'keys-cli', 'create', '--scopes', 'runtime:chat'],
    {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: h.dbUrl },
    },
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  expect({ code, err }).toEqual({ code: 0, err: '' });
  const key = JSON.parse(out);
  expect((await h.req('GET', '/v1/key', { key: key.api_key })).status).toBe(200);
  // A name that is not one of our CLIs is a usage error, not a crash.
  const bad = spawn(process.execPath, [path.join(ROOT, 'bin/svc-cli.js'), '../../etc/passwd'], { cwd: ROOT });
  expect(await new Promise((resolve) => bad.on('close', resolve))).toBe(2);
});

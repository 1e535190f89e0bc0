import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startFakeOpenAI, type FakeOpenAI } from '../helpers/fake-openai';
import { startHarness, type Harness } from '../helpers/harness';
import { testRepo } from './test-repo';

jest.setTimeout(120_000);

// The optional model-written summary of repo-report, against the fake model upstream. Secrets are
// planted where a careless prompt would pick them up: a config file, the README excerpt and the
// last commit's subject.
const base = mkdtempSync(path.join(tmpdir(), 'svc-repo-summary-'));
const repo = path.join(base, 'otter-api');
const AWS = 'AKIA' + 'ZXCVBNMASDFGHJKL';
const GH = 'ghp_' + 'b'.repeat(36);
const PEM_BODY = 'MIIEowIBAAKCAQEA' + 'x'.repeat(40);

const { write, git } = testRepo(repo, { name: 'Bo', email: 'b@x' });

let h: Harness;
let key: string;
let model: FakeOpenAI;
beforeAll(async () => {
  write(
    'README.md',
    `# Otter API\n\nTracks otter sightings along rivers. Use the key ${AWS} for the staging bucket.\n\n-----BEGIN RSA PRIVATE KEY-----\n${PEM_BODY}\n-----END RSA PRIVATE KEY-----\n`,
  );
  write('package.json', JSON.stringify({ name: 'otter-api', dependencies: { fastify: '^5.0.0' } }));
  write('src/server.ts', `export const token = "${GH}";\n`);
  write('test/server.test.ts', "test('x', () => expect(1).toBe(1));\n");
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-qm', `Rotate ${GH}`);
  model = await startFakeOpenAI();
  h = await startHarness({ env: { SVC_REPO_ROOTS: base, OPENAI_BASE_URL: model.url } });
  key = (await h.key(['runtime:chat'])).apiKey;
});
afterAll(async () => {
  await h?.close();
  await model?.close();
  rmSync(base, { recursive: true, force: true });
});

const report = (body: unknown) => h.req('POST', '/v1/capabilities/repo-report', { key, body });

test('summary: true asks the model once, from the report only, with bounded tokens and no secret value', async () => {
  model.reset();
  model.onRequest(() => ({ reply: 'Otter API is a small TypeScript service on Fastify with one test.' }));
  const r = await report({ repo, summary: true });
  expect(r.status).toBe(200);
  expect(r.body.summary).toEqual({
    text: 'Otter API is a small TypeScript service on Fastify with one test.',
    lane: 'mid',
    provider: expect.any(String),
  });
  expect(model.chats).toHaveLength(1);
  const sent = model.chats[0].body;
  expect(sent.max_tokens).toBe(600);
  const prompt = JSON.stringify(sent.messages);
  expect(prompt).toContain('Tracks otter sightings along rivers.');
  expect(prompt).toContain('fastify');
  expect(prompt).toMatch(/Possible secrets \(values withheld\): .*aws-access-key-id/);
  for (const secret of [AWS, GH, PEM_BODY]) expect(prompt).not.toContain(secret);
  // No file contents beyond the README excerpt: the source file's code is not in the prompt.
  expect(prompt).not.toContain('export const token');
  // The report itself does not echo the values either (the README excerpt is redacted too).
  for (const secret of [AWS, GH, PEM_BODY]) expect(r.text).not.toContain(secret);
});

test('without summary no model call is made; a failing model leaves the report intact with the reason', async () => {
  model.reset();
  const plain = await report({ repo });
  expect(plain.status).toBe(200);
  expect(plain.body.summary).toBeUndefined();
  expect(model.chats).toHaveLength(0);
  model.onRequest(() => ({ status: 400, reply: 'bad request' }));
  const failed = await report({ repo, summary: true });
  expect(failed.status).toBe(200);
  expect(failed.body.files).toBe(plain.body.files);
  expect(failed.body.summary).toMatchObject({ text: null, lane: 'mid', provider: null, error: expect.any(String) });
});

test('summary must be a boolean', async () => {
  const r = await report({ repo, summary: 'yes' });
  expect(r.status).toBe(400);
  expect(r.text).toContain('summary');
});

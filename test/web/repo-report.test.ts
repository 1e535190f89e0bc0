import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startHarness, type Harness } from '../helpers/harness';
import { testRepo } from './test-repo';

jest.setTimeout(120_000);

// A repository the test creates inside the configured root, with a planted secret, and a
// folder outside the root that traversal and symbolic links try to reach.
const base = mkdtempSync(path.join(tmpdir(), 'svc-repos-'));
const root = path.join(base, 'root');
const repo = path.join(root, 'marmot-service');
const outside = path.join(base, 'outside');
const AWS = 'AKIA' + 'QWERTYUIOPASDFGH';
const TOKEN = 'ghp_' + 'a'.repeat(36);

const { write, git } = testRepo(repo, { name: 'Ada', email: 'ada@example.com' });

let h: Harness;
let key: string;
beforeAll(async () => {
  mkdirSync(outside, { recursive: true });
  writeFileSync(path.join(outside, 'private.txt'), 'outside the root');
  write(
    'README.md',
    '# Marmot service\n\n[![ci](badge.svg)](x)\n\nCounts marmots in alpine colonies and reports burrow occupancy.\n\n## Install\n\nnpm install\n',
  );
  write(
    'package.json',
    JSON.stringify({ name: 'marmot-service', dependencies: { koa: '^3.0.0' }, devDependencies: { jest: '^30.0.0' } }),
  );
  write('src/index.ts', 'export const count = (n: number) => n + 1;\nexport const x = 2;\n');
  write('src/config.ts', `export const awsKey = "${AWS}";\nexport const other = 1;\n`);
  write('test/index.test.ts', "import { count } from '../src';\ntest('x', () => expect(count(1)).toBe(2));\n");
  write(
    'go/go.mod',
    'module example.com/marmots\n\ngo 1.22\n\nrequire (\n\tgithub.com/google/uuid v1.6.0\n\tgolang.org/x/sync v0.7.0 // indirect\n)\n',
  );
  write('py/requirements.txt', 'requests>=2.31\n# comment\nnumpy==1.26.4\n');
  write(
    'rs/Cargo.toml',
    '[package]\nname = "burrow"\nversion = "0.1.0"\n\n[dependencies]\nserde = { version = "1", features = ["derive"] }\ntokio = "1.37"\n',
  );
  write(
    'java/pom.xml',
    '<project><groupId>org.example</groupId><artifactId>census</artifactId><dependencies><dependency><groupId>junit</groupId><artifactId>junit</artifactId><version>4.13.2</version><scope>test</scope></dependency></dependencies></project>',
  );
  write('.github/workflows/ci.yml', 'on: push\njobs: {}\n');
  write('scripts/deploy.sh', `#!/bin/sh\nexport TOKEN=${TOKEN}\n`);
  // File names that are also names of Object.prototype members: no language of their own.
  write('bin/constructor', '#!/bin/sh\necho census\n');
  write('bin/toString', '#!/bin/sh\necho burrows\n');
  symlinkSync(outside, path.join(repo, 'escape'));
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-qm', 'First census');
  write('src/index.ts', 'export const count = (n: number) => n + 2;\n');
  git('commit', '-qam', 'Count faster');
  symlinkSync(outside, path.join(root, 'link-out'));
  h = await startHarness({ env: { SVC_REPO_ROOTS: root } });
  key = (await h.key(['runtime:chat'])).apiKey;
});
afterAll(async () => {
  await h?.close();
  rmSync(base, { recursive: true, force: true });
});

const report = (body: unknown) => h.req('POST', '/v1/capabilities/repo-report', { key, body });

test('a local repository is reported: languages, tree, manifests, tests and CI, README, git activity, secrets by location only', async () => {
  const r = await report({ repo });
  expect(r.status).toBe(200);
  const b = r.body;
  expect(b.languages.find((l: { language: string }) => l.language === 'TypeScript')).toMatchObject({
    files: 3,
    lines: 5,
  });
  // Every entry names its language (bin/constructor and bin/toString have none and are not counted).
  for (const l of b.languages) expect(typeof l.language).toBe('string');
  expect(b.tree).toMatch(/^src\/$/m);
  expect(b.tree).toMatch(/^ {2}index\.ts$/m);
  expect(b.manifests).toEqual(
    expect.arrayContaining([
      {
        path: 'package.json',
        ecosystem: 'npm',
        name: 'marmot-service',
        dependencies: [
          { name: 'koa', version: '^3.0.0', scope: 'runtime' },
          { name: 'jest', version: '^30.0.0', scope: 'dev' },
        ],
      },
      {
        path: 'go/go.mod',
        ecosystem: 'go',
        name: 'example.com/marmots',
        dependencies: [
          { name: 'github.com/google/uuid', version: 'v1.6.0', scope: 'runtime' },
          { name: 'golang.org/x/sync', version: 'v0.7.0', scope: 'indirect' },
        ],
      },
      {
        path: 'py/requirements.txt',
        ecosystem: 'python',
        dependencies: [
          { name: 'requests', version: '>=2.31' },
          { name: 'numpy', version: '==1.26.4' },
        ],
      },
      {
        path: 'rs/Cargo.toml',
        ecosystem: 'rust',
        name: 'burrow',
        dependencies: [
          { name: 'serde', version: '1', scope: 'runtime' },
          { name: 'tokio', version: '1.37', scope: 'runtime' },
        ],
      },
      {
        path: 'java/pom.xml',
        ecosystem: 'maven',
        name: 'org.example:census',
        dependencies: [{ name: 'junit:junit', version: '4.13.2', scope: 'test' }],
      },
    ]),
  );
  expect(b.tests).toEqual({ directories: ['test'], files: 1, ci: ['.github/workflows/ci.yml'] });
  expect(b.readme).toEqual({
    path: 'README.md',
    title: 'Marmot service',
    summary: 'Counts marmots in alpine colonies and reports burrow occupancy.\n\nnpm install',
  });
  expect(b.git).toMatchObject({
    commits: 2,
    contributors: [{ name: 'Ada', commits: 2 }],
    last_commit: { author: 'Ada', subject: 'Count faster' },
  });
  expect(b.git.most_changed[0]).toEqual({ path: 'src/index.ts', changes: 2 });
  expect(b.secrets).toEqual(
    expect.arrayContaining([
      { type: 'aws-access-key-id', path: 'src/config.ts', line: 1 },
      { type: 'github-token', path: 'scripts/deploy.sh', line: 2 },
    ]),
  );
  // The values never leave the server, and the symbolic link out of the repository is not followed.
  expect(r.text).not.toContain(AWS);
  expect(r.text).not.toContain(TOKEN);
  expect(r.text).not.toContain('private.txt');
  expect(b.token_estimate).toBeGreaterThan(100);
});

test('paths outside the roots are refused with 400 naming body.repo: traversal, symbolic links, absolute paths', async () => {
  for (const p of [
    outside,
    path.join(root, '..', 'outside'),
    path.join(root, 'link-out'),
    path.join(repo, 'escape'),
    '/etc',
    `${root}-evil`,
  ]) {
    const r = await report({ repo: p });
    expect([p, r.status, r.body.details?.[0]?.path]).toEqual([p, 400, 'body.repo']);
  }
  expect((await report({ repo: path.join(root, 'missing') })).status).toBe(400);
  expect((await report({ repo })).status).toBe(200);
});

test('git URLs go through the fetch guard: loopback, private and non-http schemes are refused; bad refs are 400', async () => {
  for (const url of [
    'http://127.0.0.1:9/x.git',
    'http://localhost/x.git',
    'http://[::1]/x.git',
    'http://10.0.0.8/x.git',
    'ssh://git@example.com/x.git',
    'file:///etc',
    'git@example.com:x/y.git',
  ]) {
    const r = await report({ repo: url });
    expect([url, r.status]).toEqual([url, 400]);
  }
  const ref = await report({ repo, ref: '--upload-pack=touch /tmp/pwned' });
  expect([ref.status, ref.body.details[0].path]).toEqual([400, 'body.ref']);
});

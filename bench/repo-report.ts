/**
 * repo-report on a generated 10,000-file git repository (TypeScript, Python, Go sources, manifests,
 * READMEs, a planted secret), inside a configured root. Goal: the report in ≤ 10 s. Baseline in the
 * same run: a bare walk that reads every file once (the I/O floor), printed as a ratio.
 *
 * Run: npm run -s bench -- repo-report   (BENCH_REPO_FILES to change the size; the folder is removed)
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { repoReport } from '../activities/web/repo-report';
import { rng } from './helpers';

const FILES = Number(process.env.BENCH_REPO_FILES ?? 10_000);

function walk(dir: string): number {
  let bytes = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name === '.git') continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) bytes += walk(p);
    else bytes += readFileSync(p).length;
  }
  return bytes;
}

async function main(): Promise<void> {
  const root = mkdtempSync(path.join(tmpdir(), 'svc-bench-repo-'));
  const repo = path.join(root, 'big');
  const rand = rng(7);
  try {
    const exts = ['.ts', '.py', '.go', '.md', '.json'];
    for (let i = 0; i < FILES; i++) {
      const dir = path.join(repo, `pkg${i % 50}`, `mod${i % 20}`);
      if (i < 1000) mkdirSync(dir, { recursive: true });
      const lines = 20 + Math.floor(rand() * 80);
      const body = Array.from(
        { length: lines },
        (_, l) => `// line ${l} of file ${i}: value = ${Math.floor(rand() * 1e6)}`,
      ).join('\n');
      writeFileSync(
        path.join(dir, `f${i}${exts[i % exts.length]}`),
        body + (i === 4242 ? '\nconst key = "AKIAQWERTYUIOPASDFGH";\n' : '\n'),
      );
    }
    writeFileSync(path.join(repo, 'package.json'), JSON.stringify({ name: 'big', dependencies: { koa: '^3' } }));
    writeFileSync(path.join(repo, 'README.md'), '# Big\n\nA generated repository for the repo-report benchmark.\n');
    const env = {
      ...process.env,
      GIT_AUTHOR_NAME: 'b',
      GIT_AUTHOR_EMAIL: 'b@x',
      GIT_COMMITTER_NAME: 'b',
      GIT_COMMITTER_EMAIL: 'b@x',
    };
    execFileSync('git', ['init', '-q'], { cwd: repo });
    execFileSync('git', ['add', '-A'], { cwd: repo, env });
    execFileSync('git', ['commit', '-qm', 'generated'], { cwd: repo, env });

    const t0 = performance.now();
    const bytes = walk(repo);
    const floor = performance.now() - t0;
    const t1 = performance.now();
    const r = await repoReport({ roots: [root], allowPrivate: false }, { repo });
    const ms = performance.now() - t1;
    console.log(`repo-report on ${r.files} files (${(bytes / 1e6).toFixed(1)} MB, ${r.total_lines} lines)`);
    console.log(
      `  report ${ms.toFixed(0)} ms   bare read-every-file walk ${floor.toFixed(0)} ms   ratio ${(ms / floor).toFixed(2)}`,
    );
    console.log(
      `  languages ${r.languages.map((l) => `${l.language}:${l.files}`).join(' ')}   secrets found ${r.secrets.length}`,
    );
    const pass = ms <= 10_000 && r.files >= FILES && r.secrets.length >= 1;
    console.log(pass ? 'PASS (≤ 10 s)' : 'FAIL (goal ≤ 10 s)');
    if (!pass) process.exitCode = 1;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

void main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});

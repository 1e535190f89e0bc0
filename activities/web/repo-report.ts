import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { PrivateFetchPolicy } from '../net/ssrf';
import type { RepoReport, RepoReportBody } from '../../schema/web';
import { readManifests } from './repo-manifests';
import { redactSecrets, renderTree, scanTree, type ScanResult } from './repo-scan';
import { cloneRepo, confinedPath, runGit } from './repo-source';

const TEST_DIR = /(^|\/)(test|tests|__tests__|spec|specs|e2e|integration[-_]tests?)$/i;
const TEST_FILE =
  /(\.(test|spec)\.[cm]?[jt]sx?$|_test\.(go|py)$|(^|\/)test_[^/]+\.py$|Tests?\.(java|kt|cs)$|_spec\.rb$)/;
const CI =
  /^(\.github\/workflows\/[^/]+\.ya?ml|\.gitlab-ci\.yml|\.circleci\/config\.yml|Jenkinsfile|azure-pipelines\.yml|\.travis\.yml|bitbucket-pipelines\.yml|\.drone\.yml|\.ci\/[^/]+)$/;

function readme(root: string, scan: ScanResult): RepoReport['readme'] {
  const file = scan.files.find((f) => /^readme(\.(md|markdown|rst|txt))?$/i.test(f.path));
  if (!file) return null;
  const text = readFileSync(path.join(root, file.path), 'utf8').slice(0, 100_000);
  const title = /^#\s+(.+)$/m.exec(text)?.[1]?.trim() ?? null;
  // The first prose paragraphs: no headings, badges, HTML or code fences.
  const paras = text
    .replace(/```[\s\S]*?```/g, '')
    .split(/\n\s*\n/)
    .map((p) => p.trim())
    .filter((p) => p && !/^(#|!\[|\[!\[|<|=|-{3,}|\|)/.test(p));
  let summary = '';
  for (const p of paras) {
    if (summary.length + p.length > 600) break;
    summary += (summary ? '\n\n' : '') + p.replace(/\s+/g, ' ');
  }
  // A README may hold a planted key too: the excerpt never carries a secret's value.
  return {
    path: file.path,
    title: title && redactSecrets(title),
    summary: redactSecrets(summary || (paras[0] ?? '').slice(0, 600)),
  };
}

async function gitActivity(root: string, ref?: string): Promise<RepoReport['git']> {
  if (!existsSync(path.join(root, '.git'))) return null;
  const rev = ref ?? 'HEAD';
  try {
    const log = await runGit(['log', '--no-merges', '-n', '2000', '--format=%H%x09%an%x09%aI%x09%s', rev, '--'], {
      cwd: root,
    });
    const rows = log
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        const [sha, author, date, ...subject] = l.split('\t');
        // A commit message can carry a pasted key: the report never echoes its value.
        return { sha, author, date, subject: redactSecrets(subject.join('\t')) };
      });
    const count = Number((await runGit(['rev-list', '--count', rev, '--'], { cwd: root })).trim()) || rows.length;
    const authors = new Map<string, number>();
    for (const r of rows) authors.set(r.author, (authors.get(r.author) ?? 0) + 1);
    const names = await runGit(['log', '--no-merges', '-n', '500', '--name-only', '--format=', rev, '--'], {
      cwd: root,
    });
    const changes = new Map<string, number>();
    for (const f of names.split('\n').filter(Boolean)) changes.set(f, (changes.get(f) ?? 0) + 1);
    return {
      commits: count,
      contributors: [...authors]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 20)
        .map(([name, commits]) => ({ name, commits })),
      most_changed: [...changes]
        .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
        .slice(0, 10)
        .map(([p, n]) => ({ path: p, changes: n })),
      last_commit: rows[0] ?? null,
    };
  } catch {
    return null; // an empty repository or an unknown ref: no activity to report
  }
}

/**
 * The report of a repository: a local folder inside SVC_REPO_ROOTS or a shallow clone of an
 * http(s) git URL (removed afterwards). Read-only: nothing is written outside the temporary clone.
 */
export async function repoReport(
  opts: { roots: string[]; allowPrivate: PrivateFetchPolicy },
  body: Pick<RepoReportBody, 'repo' | 'ref'>,
): Promise<RepoReport> {
  const started = Date.now();
  const remote = /^https?:\/\//i.test(body.repo) || /^(git@|ssh:|git:|file:)/i.test(body.repo);
  const cloned = remote ? await cloneRepo(body.repo, body.ref, { allowPrivate: opts.allowPrivate }) : undefined;
  const root = cloned?.dir ?? confinedPath(opts.roots, body.repo);
  try {
    const scan = scanTree(root);
    const langs = new Map<string, { files: number; lines: number }>();
    let totalLines = 0;
    let textBytes = 0;
    for (const f of scan.files) {
      totalLines += f.lines;
      if (f.text) textBytes += f.size;
      if (!f.language) continue;
      const cur = langs.get(f.language) ?? { files: 0, lines: 0 };
      cur.files++;
      cur.lines += f.lines;
      langs.set(f.language, cur);
    }
    const paths = scan.files.map((f) => f.path);
    return {
      repo: remote ? body.repo : root,
      ref: body.ref ?? null,
      files: scan.files.length,
      bytes: scan.bytes,
      languages: [...langs].sort((a, b) => b[1].lines - a[1].lines).map(([language, v]) => ({ language, ...v })),
      total_lines: totalLines,
      tree: renderTree(scan),
      manifests: readManifests(root, paths),
      tests: {
        directories: scan.dirs.filter((d) => TEST_DIR.test(d)).slice(0, 50),
        files: paths.filter((p) => TEST_FILE.test(p)).length,
        ci: paths.filter((p) => CI.test(p)).slice(0, 50),
      },
      readme: readme(root, scan),
      git: await gitActivity(root, remote ? undefined : body.ref),
      secrets: scan.secrets,
      // About four characters a token for source text.
      token_estimate: Math.round(textBytes / 4),
      truncated: scan.truncated,
      duration_ms: Date.now() - started,
    };
  } finally {
    cloned?.cleanup();
  }
}

import type { RepoReport } from '../../schema/web';
import type { ModelRouter } from '../providers/types';
import { redactSecrets } from './repo-scan';

// The optional model-written summary of a repo report. The model sees the report only (README
// excerpt, layout, manifests, tests/CI, activity), never file contents; secrets appear as counts
// by type, and everything sent passes `redactSecrets` once more.

export const SUMMARY_LANE = 'mid';
export const SUMMARY_MAX_TOKENS = 600;
const MAX_PROMPT_CHARS = 12_000;

/** The report as compact prompt text (bounded). */
export function repoSummaryPrompt(report: RepoReport): string {
  const lines: string[] = [];
  lines.push(`Repository: ${report.repo}${report.ref ? ` @ ${report.ref}` : ''}`);
  lines.push(`Files: ${report.files}, lines: ${report.total_lines}, approx. tokens: ${report.token_estimate}`);
  lines.push(
    'Languages: ' +
      report.languages
        .slice(0, 12)
        .map((l) => `${l.language} (${l.files} files, ${l.lines} lines)`)
        .join('; '),
  );
  if (report.readme) {
    lines.push(`README ${report.readme.path}${report.readme.title ? ` "${report.readme.title}"` : ''}:`);
    lines.push(report.readme.summary);
  }
  for (const m of report.manifests.slice(0, 10)) {
    const deps = m.dependencies.slice(0, 25).map((d) => d.name);
    lines.push(
      `Manifest ${m.path} (${m.ecosystem}${m.name ? `, ${m.name}` : ''}): ${deps.join(', ') || 'no dependencies'}`,
    );
  }
  lines.push(
    `Tests: ${report.tests.files} test files; test folders: ${report.tests.directories.slice(0, 10).join(', ') || 'none'}; CI: ${report.tests.ci.slice(0, 10).join(', ') || 'none'}`,
  );
  if (report.git) {
    const last = report.git.last_commit;
    lines.push(
      `Git: ${report.git.commits} commits by ${report.git.contributors.length} contributors` +
        (last ? `; last commit ${last.date.slice(0, 10)}: ${last.subject.slice(0, 200)}` : ''),
    );
    lines.push(`Most changed: ${report.git.most_changed.map((f) => f.path).join(', ')}`);
  }
  if (report.secrets.length) {
    const byType = new Map<string, number>();
    for (const s of report.secrets) byType.set(s.type, (byType.get(s.type) ?? 0) + 1);
    lines.push(`Possible secrets (values withheld): ${[...byType].map(([t, n]) => `${n} ${t}`).join(', ')}`);
  }
  lines.push('Tree:\n' + report.tree.slice(0, 3000));
  return redactSecrets(lines.join('\n')).slice(0, MAX_PROMPT_CHARS);
}

/** A short summary of what the repository is and how it is built; a model failure is reported in `error`, not thrown. */
export async function summariseRepo(
  models: ModelRouter,
  report: RepoReport,
  signal?: AbortSignal,
): Promise<NonNullable<RepoReport['summary']>> {
  try {
    const res = await models.complete({
      lane: SUMMARY_LANE,
      messages: [
        {
          role: 'system',
          content:
            'Summarise this software repository for an engineer new to it, from the report only: what it is, its main languages and frameworks, how it is built and tested, how active it is, and anything notable (such as possible secrets). At most 200 words. Do not invent facts.',
        },
        { role: 'user', content: repoSummaryPrompt(report) },
      ],
      max_tokens: SUMMARY_MAX_TOKENS,
      signal,
      timeoutMs: 60_000,
    });
    return { text: res.content.trim(), lane: SUMMARY_LANE, provider: res.provider };
  } catch (err) {
    if (signal?.aborted) throw err;
    return { text: null, lane: SUMMARY_LANE, provider: null, error: (err as Error).message.slice(0, 300) };
  }
}

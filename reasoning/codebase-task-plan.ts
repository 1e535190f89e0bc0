import { defineReasoning } from './types';
import {
  codebaseTaskPlanRequest,
  codebaseTaskPlanResponse,
  type CodebaseTaskPlanRequest,
  type CodebaseTaskPlanResponse,
} from '../schema/reasoning/codebase-task-plan';
import { buildDag, findCycles, topoOrder } from './lib/dag';
import { keywordSet } from './lib/text-segments';

type Out = CodebaseTaskPlanResponse;
const round = (x: number) => Math.round(x * 1000) / 1000;
const TEST_RE = /(^|\/)(tests?|__tests__|spec)\/|\.(test|spec)\.[a-z0-9]+$/i;
const CONFIG_RE =
  /(^|\/)(package\.json|tsconfig[^/]*|[^/]*\.config\.[a-z]+|dockerfile|\.env[^/]*|[^/]*\.ya?ml|[^/]*\.toml)$|(^|\/)migrations?\//i;
const stripExt = (p: string) => p.replace(/\.[a-z0-9]+$/i, '').replace(/\/index$/, '');
/** Path tokens: directory and file name parts, camelCase split, lower-cased. */
const pathTokens = (p: string) =>
  p
    .split(/[/._-]+/)
    .flatMap((s) => s.split(/(?<=[a-z0-9])(?=[A-Z])/))
    .map((s) => s.toLowerCase())
    .filter((s) => s.length >= 2);
const FROZEN = [
  /\b(?:don'?t|do not|never|avoid|without)\s+(?:touch(?:ing)?|modify(?:ing)?|chang(?:e|ing)|edit(?:ing)?)\s+(?:the\s+)?([^\s,;]+)/gi,
  /([^\s,;]+)\s+(?:is|are)\s+(?:frozen|read-only|off[- ]limits)/gi,
];

/**
 * Plan a coding task over a file list: files whose path words match the task (or listed in
 * focus_paths) are modified, their direct importers reviewed; the plan runs in dependency order
 * (imports before importers), each file scored for risk from explicit factors, and tests that
 * import a planned file are scheduled, narrowest first.
 */
export function planCodebaseTask(input: CodebaseTaskPlanRequest, ctx: { surface?: string }): Out {
  const maxFiles = input.preferences?.max_files ?? 30;
  const includeTests = input.preferences?.include_tests ?? true;
  const seen = new Set<string>();
  const files = input.files.filter((f) => !seen.has(f.path) && !!seen.add(f.path));
  const paths = files.map((f) => f.path);
  const lookup = new Map<string, number>();
  paths.forEach((p, i) => {
    for (const k of [p, stripExt(p)]) if (!lookup.has(k)) lookup.set(k, i);
  });
  const external = new Set<string>();
  const dag = buildDag(
    paths,
    files.map((f) => f.deps ?? []),
    (r) => lookup.get(r) ?? lookup.get(stripExt(r.replace(/^\.\//, ''))),
  );
  for (const m of dag.missing) external.add(m.ref);
  const isTest = files.map((f) => (f.kind ? f.kind === 'test' : TEST_RE.test(f.path)));
  const isConfig = files.map((f) => (f.kind ? ['config', 'migration'].includes(f.kind) : CONFIG_RE.test(f.path)));

  // Relevance: task words against path tokens (exact, or shared 5-letter stem).
  const words = keywordSet(input.task);
  const exact = new Set(words);
  const stems = new Set(words.filter((w) => w.length >= 5).map((w) => w.slice(0, 5)));
  const score = files.map(
    (f) => pathTokens(f.path).filter((t) => exact.has(t) || (t.length >= 5 && stems.has(t.slice(0, 5)))).length,
  );
  const focus = new Set(input.focus_paths ?? []);
  const frozen: { target: string; constraint: string }[] = [];
  for (const c of input.constraints ?? [])
    for (const re of FROZEN)
      for (const m of c.matchAll(re)) frozen.push({ target: m[1].toLowerCase().replace(/[.'"]+$/, ''), constraint: c });
  const frozenBy = (i: number) => frozen.find((f) => f.target.length >= 2 && paths[i].toLowerCase().includes(f.target));

  const seeds = paths
    .map((_, i) => i)
    .filter((i) => !isTest[i] && (focus.has(paths[i]) || score[i] > 0))
    .sort((x, y) => Number(focus.has(paths[y])) - Number(focus.has(paths[x])) || score[y] - score[x] || x - y);
  const action = new Map<number, { action: 'modify' | 'review'; reason: string }>();
  const excluded: Out['excluded_by_constraints'] = [];
  for (const i of seeds) {
    const fz = frozenBy(i);
    if (fz) excluded.push({ path: paths[i], constraint: fz.constraint });
    action.set(
      i,
      fz
        ? { action: 'review', reason: `matches the task but is frozen by "${fz.constraint}"` }
        : {
            action: 'modify',
            reason: focus.has(paths[i]) ? 'listed in focus_paths' : `path matches task words (${score[i]})`,
          },
    );
  }
  for (const i of seeds)
    for (const d of dag.succ[i])
      if (!action.has(d) && !isTest[d])
        action.set(d, { action: 'review', reason: `imports ${paths[i]}, which changes` });
  const chosen = [...action.keys()]
    .sort(
      (x, y) =>
        Number(action.get(x)!.action === 'review') - Number(action.get(y)!.action === 'review') ||
        Number(focus.has(paths[y])) - Number(focus.has(paths[x])) ||
        score[y] - score[x] ||
        x - y,
    )
    .slice(0, maxFiles);
  const inPlan = new Set(chosen);

  const testsOf = (i: number) => dag.succ[i].filter((d) => isTest[d]);
  const maxFanIn = chosen.reduce((m, i) => Math.max(m, dag.succ[i].length), 1);
  const risk = (i: number) => {
    const f = files[i];
    const size = f.lines ?? (f.size_bytes !== undefined ? f.size_bytes / 40 : 100);
    const F: [string, number, number][] = [
      ['size', 0.25, Math.min(1, size / 800)],
      ['fan_in', 0.3, dag.succ[i].length / maxFanIn],
      ['churn', 0.15, Math.min(1, (f.churn ?? 0) / 20)],
      ['untested', 0.2, testsOf(i).length ? 0 : 1],
      ['config_or_migration', 0.1, isConfig[i] ? 1 : 0],
    ];
    const factors = F.map(([name, weight, value]) => ({ name, weight, value: round(value) }));
    const s = round(factors.reduce((t, x) => t + x.weight * x.value, 0));
    return {
      level: s >= 0.6 ? ('high' as const) : s >= 0.35 ? ('medium' as const) : ('low' as const),
      score: s,
      factors,
    };
  };

  // Dependency order among planned files: imports first; cycle members keep input order at the end.
  const sub = chosen.slice().sort((x, y) => x - y);
  const subDag = buildDag(
    sub.map((i) => paths[i]),
    sub.map((i) => dag.pred[i].filter((p) => inPlan.has(p)).map((p) => paths[p])),
  );
  const { order, stuck } = topoOrder(subDag, (k) => (action.get(sub[k])!.action === 'modify' ? 1 : 0));
  const change_plan: Out['change_plan'] = [...order, ...stuck].map((k, o) => {
    const i = sub[k];
    return {
      order: o + 1,
      path: paths[i],
      ...action.get(i)!,
      depends_on: subDag.pred[k].map((p) => paths[sub[p]]),
      risk: risk(i),
    };
  });

  const run: Out['test_plan']['run'] = [];
  const write: Out['test_plan']['write'] = [];
  if (includeTests) {
    const covers = new Map<number, string[]>();
    for (const c of change_plan)
      for (const t of testsOf(lookup.get(c.path)!)) covers.set(t, [...(covers.get(t) ?? []), c.path]);
    run.push(
      ...[...covers]
        .sort(([a, ca], [b, cb]) => ca.length - cb.length || a - b)
        .slice(0, maxFiles)
        .map(([t, c]) => ({ path: paths[t], covers: c })),
    );
    for (const c of change_plan)
      if (c.action === 'modify' && !testsOf(lookup.get(c.path)!).length && write.length < maxFiles)
        write.push({
          for_path: c.path,
          suggested_path: c.path.replace(/(\.[a-z0-9]+)$/i, '.test$1'),
          reason: 'modified file has no test importing it',
        });
  }
  const cycles = findCycles(dag)
    .filter((c) => c.some((i) => inPlan.has(i)))
    .map((c) => c.map((i) => paths[i]));
  const high = change_plan.filter((c) => c.risk.level === 'high').length;

  return {
    surface: ctx.surface ?? input.surface ?? null,
    task_keywords: words.slice(0, 50),
    change_plan,
    test_plan: { run, write },
    cycles,
    external_deps: [...external].sort().slice(0, 200),
    excluded_by_constraints: excluded.filter((e) => inPlan.has(lookup.get(e.path)!)),
    truncated: action.size > chosen.length,
    integration_hints: [
      {
        kind: 'agent',
        target: 'change_plan',
        detail: 'Apply changes in order; each file only after its depends_on files.',
      },
      { kind: 'review', target: 'change_plan', detail: `${high} high-risk file(s): request a reviewer who owns them.` },
      {
        kind: 'ci',
        target: 'test_plan',
        detail: `Run ${run.length} test file(s), narrowest first, after each step; add ${write.length} missing test(s).`,
      },
    ],
  };
}

export const codebaseTaskPlan = defineReasoning({
  path: '/codebase/task/plan',
  summary: 'Order the file changes a coding task needs, with per-file risk and a test plan',
  request: codebaseTaskPlanRequest,
  response: codebaseTaskPlanResponse,
  compile: planCodebaseTask,
  example: {
    surface: 'code',
    task: 'Add session expiry to authentication and show the expiry in the account settings page',
    files: [
      { path: 'src/auth/session.ts', lines: 420, deps: ['src/db/client.ts', 'src/config.ts'], churn: 14 },
      { path: 'src/auth/login.ts', lines: 180, deps: ['src/auth/session.ts'] },
      { path: 'src/api/middleware.ts', lines: 90, deps: ['src/auth/session'] },
      { path: 'src/ui/settings/AccountSettings.tsx', lines: 260, deps: ['src/api/client.ts', 'react'] },
      { path: 'src/api/client.ts', lines: 120 },
      { path: 'src/db/client.ts', lines: 300 },
      { path: 'src/config.ts', lines: 60 },
      { path: 'db/migrations/0007_sessions.sql', lines: 40 },
      { path: 'test/auth/session.test.ts', deps: ['src/auth/session.ts'] },
      { path: 'test/api/middleware.test.ts', deps: ['src/api/middleware.ts'] },
    ],
    focus_paths: ['src/config.ts'],
    constraints: ['do not touch db/migrations'],
    preferences: { max_files: 10 },
  },
});

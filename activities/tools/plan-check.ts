import { AppError, invalid, type ErrorDetail } from '../../schema/errors';
import { findCycle } from '../../schema/task-graph';
import { PLAN_REF, WHOLE_PLAN_REF, type PlanStep, type PlanStepIn, type ToolPlan } from '../../schema/tools-plans';
import { mayUse, toolRegistry } from './registry';
import type { ToolDef } from './types';

/** Rough duration of one call by tool (ms), for the critical-path estimate; pure tools are ~instant. */
const ESTIMATES: Record<string, number> = {
  web_search: 1500,
  web_fetch: 1000,
  research: 500,
  knowledge_search: 50,
  memory_write: 200,
  task_create: 50,
  task_execute: 200,
  email_send: 200,
  browser_session_create: 2500,
  browser_open: 1500,
  browser_snapshot: 500,
  browser_action: 800,
  browser_close: 300,
};
export const estimateOf = (t: ToolDef) => ESTIMATES[t.name] ?? (t.group === 'runtime' ? 20 : 5);

/** RFC 6901 pointer of a path. */
export function pointer(parts: ReadonlyArray<string | number>): string {
  return parts.map((p) => '/' + String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('');
}

/** Every string inside `value` with its path. */
function strings(
  value: unknown,
  path: Array<string | number> = [],
): Array<{ path: Array<string | number>; s: string }> {
  if (typeof value === 'string') return [{ path, s: value }];
  if (Array.isArray(value)) return value.flatMap((v, i) => strings(v, [...path, i]));
  if (value !== null && typeof value === 'object')
    return Object.entries(value).flatMap(([k, v]) => strings(v, [...path, k]));
  return [];
}

/**
 * Checks a list of steps against the registry and the key's scopes and compiles it into a plan:
 * implicit dependencies from references, levels, approval gates, critical path and preview.
 * @throws AppError invalid_request (details carry JSON pointers such as /steps/1/args/url), forbidden (a tool beyond the key's scopes)
 */
export function compilePlan(o: {
  steps: PlanStepIn[];
  scopes: readonly string[];
  allowedTools?: readonly string[];
}): Pick<ToolPlan, 'steps' | 'levels' | 'critical_path' | 'gates' | 'preview'> {
  const details: ErrorDetail[] = [];
  const ids = new Set<string>();
  const byName = new Map(toolRegistry().map((t) => [t.name, t]));
  const forbidden: Array<{ step: string; tool: ToolDef }> = [];
  o.steps.forEach((s, i) => {
    if (ids.has(s.id)) details.push({ path: pointer(['steps', i, 'id']), message: `duplicate step id "${s.id}"` });
    ids.add(s.id);
  });
  const deps = o.steps.map((s) => new Set(s.depends_on));
  o.steps.forEach((s, i) => {
    const tool = byName.get(s.tool);
    if (!tool) details.push({ path: pointer(['steps', i, 'tool']), message: `unknown tool "${s.tool}"` });
    else if (o.allowedTools && !o.allowedTools.includes(s.tool))
      details.push({ path: pointer(['steps', i, 'tool']), message: `"${s.tool}" is not in the tools allowed here` });
    else if (!mayUse(tool, o.scopes)) forbidden.push({ step: s.id, tool });
    s.depends_on.forEach((d, j) => {
      if (!ids.has(d)) details.push({ path: pointer(['steps', i, 'depends_on', j]), message: `"${d}" is not a step` });
    });
    const refPaths: Array<Array<string | number>> = [];
    for (const { path, s: text } of strings(s.args)) {
      for (const m of text.matchAll(PLAN_REF)) {
        refPaths.push(path);
        if (!ids.has(m[1]) || m[1] === s.id)
          details.push({
            path: pointer(['steps', i, 'args', ...path]),
            message: `{{steps.${m[1]}...}} names no earlier step`,
          });
        else deps[i].add(m[1]);
      }
    }
    if (tool) {
      const parsed = tool.input.safeParse(s.args);
      if (!parsed.success) {
        for (const issue of parsed.error.issues) {
          const at = issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p));
          // A value that references a result is checked when it is known (at run time).
          if (refPaths.some((r) => r.length <= at.length && r.every((p, k) => String(p) === String(at[k])))) continue;
          details.push({ path: pointer(['steps', i, 'args', ...at]), message: issue.message });
        }
      }
    }
  });
  if (details.length) throw invalid(details, 'plan');
  if (forbidden.length) {
    const f = forbidden[0];
    throw new AppError(
      'forbidden',
      `Step "${f.step}" uses the tool ${f.tool.name}, which needs the scope ${f.tool.scope} that this key does not hold.`,
      { scope: String(f.tool.scope) },
    );
  }
  const graph = o.steps.map((s, i) => ({ id: s.id, depends_on: [...deps[i]] }));
  const cycle = findCycle(graph);
  if (cycle) throw invalid([{ path: '/steps', message: `dependency cycle ${cycle.join(' → ')}` }], 'plan');

  // Levels and the critical path, in dependency order (the graph is a DAG now).
  const level = new Map<string, number>();
  const finish = new Map<string, { ms: number; prev?: string }>();
  const steps: PlanStep[] = [];
  const pending = [...graph.keys()];
  while (pending.length) {
    const k = pending.findIndex((i) => graph[i].depends_on.every((d) => level.has(d)));
    const i = pending.splice(k, 1)[0];
    const s = o.steps[i];
    const tool = byName.get(s.tool)!;
    const d = graph[i].depends_on;
    level.set(s.id, d.length ? 1 + Math.max(...d.map((x) => level.get(x)!)) : 0);
    const longest = d.reduce<{ ms: number; prev?: string }>(
      (best, x) => (finish.get(x)!.ms > best.ms ? { ms: finish.get(x)!.ms, prev: x } : best),
      { ms: 0 },
    );
    finish.set(s.id, { ms: longest.ms + estimateOf(tool), prev: longest.prev });
    steps.push({
      id: s.id,
      tool: s.tool,
      args: s.args,
      depends_on: d,
      ...(s.note ? { note: s.note } : {}),
      level: level.get(s.id)!,
      gate: tool.destructive || (tool.external && !tool.readOnly) || s.approval === true,
      read_only: tool.readOnly,
      destructive: tool.destructive,
      external: tool.external,
      scope: String(tool.scope),
      estimate_ms: estimateOf(tool),
    });
  }
  const order = o.steps.map((s) => s.id);
  steps.sort((a, b) => a.level - b.level || order.indexOf(a.id) - order.indexOf(b.id));
  const levels: string[][] = [];
  for (const s of steps) (levels[s.level] ??= []).push(s.id);
  const end = [...finish].reduce((a, b) => (b[1].ms > a[1].ms ? b : a));
  const path = [end[0]];
  for (let p = end[1].prev; p; p = finish.get(p)!.prev) path.unshift(p);
  return {
    steps,
    levels,
    critical_path: { steps: path, estimate_ms: finish.get(path[path.length - 1])!.ms },
    gates: steps.filter((s) => s.gate).map((s) => s.id),
    preview: steps.map(
      (s) =>
        `[level ${s.level}] ${s.id}: ${s.tool}(${JSON.stringify(s.args).slice(0, 200)})` +
        `${s.depends_on.length ? ` after ${s.depends_on.join(', ')}` : ''}` +
        `${s.read_only ? ' (read-only)' : ''}${s.gate ? ' — waits for approval' : ''}`,
    ),
  };
}

function at(value: unknown, path: string): unknown {
  let cur = value;
  for (const key of path.split('.').filter(Boolean)) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

/**
 * Replaces references with results: a string that is one reference becomes the value itself (any
 * type); a reference inside longer text becomes its text (JSON for objects).
 */
export function resolveRefs(args: unknown, results: ReadonlyMap<string, unknown>): unknown {
  if (typeof args === 'string') {
    const whole = WHOLE_PLAN_REF.exec(args);
    if (whole) return at(results.get(whole[1]), whole[2]);
    return args.replace(PLAN_REF, (_m, id: string, p: string) => {
      const v = at(results.get(id), p);
      return v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v);
    });
  }
  if (Array.isArray(args)) return args.map((v) => resolveRefs(v, results));
  if (args !== null && typeof args === 'object')
    return Object.fromEntries(Object.entries(args).map(([k, v]) => [k, resolveRefs(v, results)]));
  return args;
}

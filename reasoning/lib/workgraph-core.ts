import type { DateTime } from 'luxon';
import type { WorkItem } from '../../schema/reasoning/workgraph-compile';
import { buildDag, criticalPath, findCycles, topoOrder, reach, type Dag } from './dag';
import { isoOut, parseInstant } from './luxon-time';

/**
 * Shared analysis behind /workgraph/compile and /workgraph/answer: dependency DAG, cycles,
 * remaining-work critical path with slack, blocked/ready status, lateness against a caller
 * clock (luxon, time-zone aware) and per-owner load. O((n + e) log n).
 */
const DONE = new Set([
  'done',
  'complete',
  'completed',
  'closed',
  'cancelled',
  'canceled',
  'shipped',
  'resolved',
  'merged',
]);
export type BlockReason = {
  kind: 'open_dependency' | 'missing_dependency' | 'dependency_cycle' | 'status_blocked';
  refs: string[];
};

export interface WorkgraphAnalysis {
  items: WorkItem[];
  ids: string[];
  index: Map<string, number>;
  dag: Dag;
  order: number[];
  stuck: number[];
  cycles: number[][];
  open: boolean[];
  hours: number[];
  es: Float64Array;
  ef: Float64Array;
  slack: Float64Array;
  critical: Set<number>;
  cpPath: number[];
  cpLength: number;
  blocked: Map<number, BlockReason[]>;
  ready: number[];
  due: (DateTime | null)[];
  forecast: (DateTime | null)[];
  late: ('overdue' | 'at_risk' | null)[];
  projectFinish: DateTime | null;
  warnings: string[];
  hoursPerDay: number;
}

export function analyzeWorkgraph(
  raw: readonly WorkItem[],
  opts: { now?: string; timezone?: string; hoursPerDay?: number },
): WorkgraphAnalysis {
  const warnings: string[] = [];
  const seen = new Set<string>();
  const items: WorkItem[] = [];
  for (const it of raw) {
    if (seen.has(it.id)) warnings.push(`duplicate item id "${it.id}" ignored`);
    else {
      seen.add(it.id);
      items.push(it);
    }
  }
  const n = items.length;
  const ids = items.map((i) => i.id);
  const index = new Map(ids.map((id, i) => [id, i]));
  const hoursPerDay = opts.hoursPerDay ?? 6;
  const open = items.map((i) => !DONE.has((i.status ?? 'todo').toLowerCase().trim()));
  const hours = items.map((it, i) => (open[i] ? (it.estimate_hours ?? 1) : 0));
  const dag = buildDag(
    ids,
    items.map((i) => i.depends_on ?? []),
  );
  const cycles = findCycles(dag);
  const { order, stuck } = topoOrder(dag);
  const cp = criticalPath(dag, order, (i) => hours[i]);

  // Backward pass: latest finish without delaying the remaining-work end.
  const lf = new Float64Array(n).fill(NaN);
  for (let k = order.length - 1; k >= 0; k--) {
    const v = order[k];
    let m = cp.length;
    for (const s of dag.succ[v]) if (!Number.isNaN(lf[s])) m = Math.min(m, lf[s] - hours[s]);
    lf[v] = m;
  }
  const slack = new Float64Array(n).fill(NaN);
  for (const v of order) slack[v] = Math.max(0, Math.round((lf[v] - cp.finish[v]) * 1000) / 1000);
  const critical = new Set(cp.path.filter((v) => open[v]));

  const blocked = new Map<number, BlockReason[]>();
  const add = (v: number, r: BlockReason) => blocked.set(v, [...(blocked.get(v) ?? []), r]);
  const inCycle = new Map<number, number[]>();
  for (const c of cycles) for (const v of c) inCycle.set(v, c);
  const missing = new Map<number, string[]>();
  for (const m of dag.missing) missing.set(m.node, [...(missing.get(m.node) ?? []), m.ref]);
  for (let v = 0; v < n; v++) {
    if (!open[v]) continue;
    const openPreds = dag.pred[v].filter((p) => open[p] && p !== v);
    if (openPreds.length) add(v, { kind: 'open_dependency', refs: openPreds.map((p) => ids[p]) });
    if (missing.has(v)) add(v, { kind: 'missing_dependency', refs: missing.get(v)! });
    if (inCycle.has(v)) add(v, { kind: 'dependency_cycle', refs: inCycle.get(v)!.map((x) => ids[x]) });
    if ((items[v].status ?? '').toLowerCase().trim() === 'blocked') add(v, { kind: 'status_blocked', refs: [] });
  }
  const ready = order.filter((v) => open[v] && !blocked.has(v));

  const now = parseInstant(opts.now, opts.timezone);
  if (opts.now && !now) warnings.push('now is not a valid ISO date-time; lateness skipped');
  const due = items.map((it) => parseInstant(it.due, opts.timezone));
  items.forEach((it, i) => {
    if (it.due && !due[i]) warnings.push(`item "${it.id}" has an unreadable due date`);
  });
  // Calendar-day forecast: remaining hours on the longest chain, hours_per_day per day.
  const days = (h: number) => Math.ceil(h / hoursPerDay - 1e-9);
  const forecast = items.map((_, i) =>
    now && open[i] && !Number.isNaN(cp.finish[i]) ? now.plus({ days: days(cp.finish[i]) }) : null,
  );
  const late = items.map((_, i) => {
    if (!now || !open[i] || !due[i]) return null;
    if (due[i]! < now) return 'overdue' as const;
    return forecast[i] && forecast[i]! > due[i]! ? ('at_risk' as const) : null;
  });
  const projectFinish = now ? now.plus({ days: days(cp.length) }) : null;
  return {
    items,
    ids,
    index,
    dag,
    order,
    stuck,
    cycles,
    open,
    hours,
    es: cp.start,
    ef: cp.finish,
    slack,
    critical,
    cpPath: cp.path,
    cpLength: cp.length,
    blocked,
    ready,
    due,
    forecast,
    late,
    projectFinish,
    warnings,
    hoursPerDay,
  };
}

export const iso = (d: DateTime | null): string | null => (d ? isoOut(d) : null);

/** Open items upstream of `v` (transitive prerequisites), nearest first, capped. */
export const openUpstream = (a: WorkgraphAnalysis, v: number, cap: number) =>
  reach(a.dag.pred, [v], cap * 4)
    .filter((u) => a.open[u])
    .slice(0, cap);
/** Items downstream of `v` (transitive dependents), nearest first, capped. */
export const downstream = (a: WorkgraphAnalysis, v: number, cap: number) => reach(a.dag.succ, [v], cap);

/** Per-owner open work, heaviest first (ties by owner name). */
export function ownerLoad(a: WorkgraphAnalysis) {
  const m = new Map<
    string,
    {
      owner: string;
      open_items: number;
      open_hours: number;
      ready_items: number;
      blocked_items: number;
      item_idx: number[];
    }
  >();
  const readySet = new Set(a.ready);
  a.items.forEach((it, i) => {
    if (!a.open[i]) return;
    const owner = it.owner ?? 'unassigned';
    const e = m.get(owner) ?? { owner, open_items: 0, open_hours: 0, ready_items: 0, blocked_items: 0, item_idx: [] };
    e.open_items++;
    e.open_hours += a.hours[i];
    if (readySet.has(i)) e.ready_items++;
    if (a.blocked.has(i)) e.blocked_items++;
    e.item_idx.push(i);
    m.set(owner, e);
  });
  return [...m.values()]
    .map((e) => ({
      ...e,
      open_hours: Math.round(e.open_hours * 100) / 100,
      days_of_work: Math.round((e.open_hours / a.hoursPerDay) * 100) / 100,
    }))
    .sort((x, y) => y.open_hours - x.open_hours || (x.owner < y.owner ? -1 : x.owner > y.owner ? 1 : 0));
}

import { defineReasoning } from './types';
import {
  workgraphCompileRequest,
  workgraphCompileResponse,
  type WorkgraphCompileRequest,
  type WorkgraphCompileResponse,
} from '../schema/reasoning/workgraph-compile';
import { analyzeWorkgraph, iso, ownerLoad } from './lib/workgraph-core';

type Out = WorkgraphCompileResponse;
const num = (x: number) => (Number.isNaN(x) ? null : Math.round(x * 1000) / 1000);

/**
 * Compile work items into a work graph: dependency edges, topological order, the critical path
 * of remaining work (with slack per item), blocked and ready items, lateness against the
 * caller's clock and per-owner load. Under max_nodes, critical, blocked and late items are kept
 * before the rest; edges only connect kept nodes.
 */
export function compileWorkgraph(input: WorkgraphCompileRequest, ctx: { surface?: string }): Out {
  const maxNodes = input.preferences?.max_nodes ?? 200;
  const a = analyzeWorkgraph(input.items, {
    now: input.now,
    timezone: input.timezone,
    hoursPerDay: input.preferences?.hours_per_day,
  });
  const n = a.items.length;
  const pos = new Int32Array(n);
  [...a.order, ...a.stuck].forEach((v, k) => (pos[v] = k));

  // Keep the most informative nodes first, then restore graph order.
  const tier = (v: number) => (a.critical.has(v) ? 0 : a.late[v] ? 1 : a.blocked.has(v) ? 2 : a.open[v] ? 3 : 4);
  const keep = Array.from({ length: n }, (_, v) => v)
    .sort((x, y) => tier(x) - tier(y) || pos[x] - pos[y])
    .slice(0, maxNodes)
    .sort((x, y) => pos[x] - pos[y]);
  const kept = new Uint8Array(n);
  for (const v of keep) kept[v] = 1;

  const nodes: Out['nodes'] = keep.map((v) => {
    const it = a.items[v];
    return {
      id: it.id,
      title: it.title ?? it.id,
      owner: it.owner ?? null,
      status: it.status ?? 'todo',
      open: a.open[v],
      estimate_hours: a.hours[v],
      earliest_start_hours: num(a.es[v]),
      earliest_finish_hours: num(a.ef[v]),
      slack_hours: num(a.slack[v]),
      critical: a.critical.has(v),
      blocked: a.blocked.has(v),
      ready: a.open[v] && !a.blocked.has(v) && !Number.isNaN(a.es[v]),
      due: it.due ?? null,
      forecast_finish: iso(a.forecast[v]),
      late: a.late[v],
    };
  });
  const edges: Out['edges'] = [];
  for (const v of keep) for (const p of a.dag.pred[v]) if (kept[p]) edges.push({ from: a.ids[p], to: a.ids[v] });

  const blocked_items = [...a.blocked]
    .sort(([x], [y]) => pos[x] - pos[y])
    .map(([v, reasons]) => ({ id: a.ids[v], reasons }));
  const late_items = a.order
    .concat(a.stuck)
    .filter((v) => a.late[v])
    .sort((x, y) => a.due[x]!.toMillis() - a.due[y]!.toMillis() || pos[x] - pos[y])
    .map((v) => ({ id: a.ids[v], late: a.late[v]!, due: a.items[v].due!, forecast_finish: iso(a.forecast[v]) }));
  const owner_load = ownerLoad(a).map(({ item_idx: _drop, ...rest }) => rest);
  const busiest = owner_load[0];

  return {
    surface: ctx.surface ?? input.surface ?? null,
    nodes,
    edges,
    topological_order: a.order.filter((v) => kept[v]).map((v) => a.ids[v]),
    critical_path: {
      item_ids: a.cpPath.filter((v) => a.open[v]).map((v) => a.ids[v]),
      total_hours: num(a.cpLength) ?? 0,
      forecast_finish: iso(a.projectFinish),
    },
    blocked_items,
    ready_items: a.ready.map((v) => a.ids[v]),
    late_items,
    owner_load,
    cycles: a.cycles.map((c) => c.map((v) => a.ids[v])),
    truncated: keep.length < n,
    omitted_nodes: n - keep.length,
    warnings: a.warnings,
    integration_hints: [
      {
        kind: 'board',
        target: 'nodes',
        detail: 'Render nodes/edges as a dependency board; highlight critical and blocked nodes.',
      },
      { kind: 'next_up', target: 'ready_items', detail: `${a.ready.length} item(s) can start now.` },
      {
        kind: 'load',
        target: 'owner_load',
        detail: busiest
          ? `Heaviest load: ${busiest.owner} with ${busiest.days_of_work} day(s) of open work.`
          : 'No open work.',
      },
      {
        kind: 'clock',
        target: 'late_items',
        detail: input.now ? 'Lateness computed against the supplied now.' : 'Send now to get lateness and forecasts.',
      },
    ],
  };
}

export const workgraphCompile = defineReasoning({
  path: '/workgraph/compile',
  summary: 'Compile work items into a work graph with critical path, blocked items and owner load',
  request: workgraphCompileRequest,
  response: workgraphCompileResponse,
  compile: compileWorkgraph,
  example: {
    surface: 'pm',
    now: '2026-05-04T09:00:00',
    timezone: 'Europe/Berlin',
    items: [
      { id: 'spec', title: 'Write API spec', owner: 'ana', status: 'done', estimate_hours: 8 },
      {
        id: 'schema',
        title: 'Database schema',
        owner: 'ben',
        status: 'in_progress',
        depends_on: ['spec'],
        estimate_hours: 6,
      },
      {
        id: 'api',
        title: 'Implement endpoints',
        owner: 'ben',
        depends_on: ['schema'],
        estimate_hours: 16,
        due: '2026-05-06',
      },
      { id: 'ui', title: 'Build settings UI', owner: 'cho', depends_on: ['spec'], estimate_hours: 10 },
      {
        id: 'e2e',
        title: 'End-to-end tests',
        owner: 'cho',
        depends_on: ['api', 'ui'],
        estimate_hours: 6,
        due: '2026-05-12',
      },
      { id: 'launch', title: 'Launch checklist', owner: 'ana', depends_on: ['e2e', 'legal-review'], estimate_hours: 2 },
      { id: 'docs', title: 'Update docs', owner: 'ana', status: 'blocked', estimate_hours: 3, due: '2026-05-01' },
    ],
    preferences: { max_nodes: 50, hours_per_day: 6 },
  },
});

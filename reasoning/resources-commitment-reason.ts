import { defineReasoning } from './types';
import {
  resourcesCommitmentRequest,
  resourcesCommitmentResponse,
  type ResourcesCommitmentRequest,
  type ResourcesCommitmentResponse,
} from '../schema/reasoning/resources-commitment-reason';
import { isoOut, parseInstant } from './lib/luxon-time';

type Out = ResourcesCommitmentResponse;
const r2 = (x: number) => Math.round(x * 100) / 100;
const EPS = 1e-9;

/**
 * Reason over resources and commitments: total and dated over-commitment (capacity accrues
 * evenly over a resource's period; commitments are checked earliest-due-first, luxon handles
 * the zones), a feasible subset chosen greedily by must_keep, priority, due date and input
 * order, and for deferred commitments the trade-offs that would admit them: drop kept
 * commitments of no higher priority on the blocking resources, or add the missing capacity.
 */
export function reasonCommitments(input: ResourcesCommitmentRequest, ctx: { surface?: string }): Out {
  const maxTradeoffs = input.preferences?.max_tradeoffs ?? 10;
  const tz = input.timezone;
  const warnings: string[] = [];
  const uniq = <T extends { id: string }>(xs: T[], what: string) => {
    const seen = new Set<string>();
    return xs.filter((x) =>
      seen.has(x.id) ? (warnings.push(`duplicate ${what} id "${x.id}" ignored`), false) : !!seen.add(x.id),
    );
  };
  const resources = uniq(input.resources, 'resource');
  const commits = uniq(input.commitments, 'commitment');
  const rIndex = new Map(resources.map((r, i) => [r.id, i]));
  const unknown = new Set<string>();
  // Per commitment: resource index → amount (unknown resources are unconstrained and reported).
  const need = commits.map((c) => {
    const m = new Map<number, number>();
    for (const d of c.demands) {
      const i = rIndex.get(d.resource_id);
      if (i === undefined) unknown.add(d.resource_id);
      else m.set(i, (m.get(i) ?? 0) + d.amount);
    }
    return m;
  });
  for (const u of [...unknown].sort()) warnings.push(`demand on undeclared resource "${u}" ignored`);

  const demanded = new Float64Array(resources.length);
  need.forEach((m) => m.forEach((amt, i) => (demanded[i] += amt)));
  const utilization: Out['utilization'] = resources.map((r, i) => {
    const ratio = r2(demanded[i] / r.capacity);
    return {
      resource_id: r.id,
      kind: r.kind ?? null,
      capacity: r.capacity,
      demanded: r2(demanded[i]),
      // 999 stands for "no usable capacity": zero, or so small that the ratio overflows (e.g. 5e-324).
      utilization: r.capacity > 0 && Number.isFinite(ratio) ? ratio : demanded[i] > 0 ? 999 : 0,
      over_by: r2(Math.max(0, demanded[i] - r.capacity)),
    };
  });
  const overIds = utilization.filter((u) => u.over_by > 0).map((u) => u.resource_id);

  // Dated check: earliest-due-first cumulative demand vs capacity accrued by each due date.
  const due = commits.map((c) => parseInstant(c.due, tz));
  const byDate: Out['over_commitment']['by_date'] = [];
  const byDue = commits
    .map((_, k) => k)
    .filter((k) => due[k])
    .sort((a, b) => due[a]!.toMillis() - due[b]!.toMillis() || a - b);
  resources.forEach((r, i) => {
    const start = parseInstant(r.period_start, tz);
    const end = parseInstant(r.period_end, tz);
    if (!start || !end || end <= start) return;
    const span = end.toMillis() - start.toMillis();
    let cum = 0;
    for (const k of byDue) {
      if (!need[k].has(i)) continue;
      cum += need[k].get(i)!;
      const frac = Math.min(1, Math.max(0, (due[k]!.toMillis() - start.toMillis()) / span));
      const avail = r.capacity * frac;
      if (cum > avail + EPS) {
        byDate.push({
          resource_id: r.id,
          commitment_id: commits[k].id,
          due: isoOut(due[k]!),
          cumulative_demand: r2(cum),
          available_by_then: r2(avail),
        });
        break; // the first breach per resource is the actionable one
      }
    }
  });
  const now = parseInstant(input.now, tz);
  const pastDue = now ? commits.filter((_, k) => due[k] && due[k]! < now).map((c) => c.id) : [];

  // Greedy feasible subset.
  const order = commits
    .map((_, k) => k)
    .sort((a, b) => {
      const ca = commits[a];
      const cb = commits[b];
      return (
        Number(!!cb.must_keep) - Number(!!ca.must_keep) ||
        (cb.priority ?? 0) - (ca.priority ?? 0) ||
        (due[a] ? due[a]!.toMillis() : Infinity) - (due[b] ? due[b]!.toMillis() : Infinity) ||
        a - b
      );
    });
  const left = Float64Array.from(resources, (r) => r.capacity);
  const kept: Out['feasible_subset']['kept'] = [];
  const deferred: { k: number; blocking: number[] }[] = [];
  const keptOn = resources.map(() => [] as number[]);
  for (const k of order) {
    const blocking = [...need[k]]
      .filter(([i, amt]) => amt > left[i] + EPS)
      .map(([i]) => i)
      .sort((a, b) => a - b);
    if (blocking.length && !commits[k].must_keep) {
      deferred.push({ k, blocking });
      continue;
    }
    need[k].forEach((amt, i) => {
      left[i] -= amt;
      keptOn[i].push(k);
    });
    kept.push({ commitment_id: commits[k].id, forced: blocking.length > 0 });
  }

  // Trade-offs for the most important deferred commitments.
  const dropped = new Set<number>();
  const trade_offs: Out['trade_offs'] = [];
  for (const { k, blocking } of deferred) {
    if (trade_offs.length >= maxTradeoffs) break;
    const c = commits[k];
    const shortfall = blocking.map((i) => ({ i, amt: need[k].get(i)! - Math.max(0, left[i]) }));
    const drop = new Set<number>();
    let ok = true;
    for (const { i, amt } of shortfall) {
      let freed = [...drop].reduce((s, d) => s + (need[d].get(i) ?? 0), 0);
      // Candidates: kept, droppable, no more important than c. Lowest priority first, then the
      // largest consumer, then input order; bounded scan.
      // keptOn is in greedy (priority-descending) order, so walk it from the end.
      const pool: number[] = [];
      for (let x = keptOn[i].length - 1; x >= 0 && pool.length < 200; x--) {
        const d = keptOn[i][x];
        if (!commits[d].must_keep && (commits[d].priority ?? 0) <= (c.priority ?? 0) && !dropped.has(d)) pool.push(d);
      }
      pool.sort(
        (a, b) => (commits[a].priority ?? 0) - (commits[b].priority ?? 0) || need[b].get(i)! - need[a].get(i)! || a - b,
      );
      for (const d of pool) {
        if (freed >= amt - EPS) break;
        if (!drop.has(d)) {
          drop.add(d);
          freed += need[d].get(i)!;
        }
      }
      if (freed < amt - EPS) ok = false;
    }
    if (ok && drop.size && trade_offs.length < maxTradeoffs) {
      const ids = [...drop].sort((a, b) => a - b);
      for (const d of ids) dropped.add(d);
      trade_offs.push({
        commitment_id: c.id,
        kind: 'drop_commitments',
        drop_ids: ids.map((d) => commits[d].id),
        resource_changes: shortfall.map(({ i }) => ({
          resource_id: resources[i].id,
          amount: r2(ids.reduce((s, d) => s + (need[d].get(i) ?? 0), 0)),
        })),
        detail: `Keep ${c.id} (priority ${c.priority ?? 0}) by dropping ${ids.map((d) => `${commits[d].id} (priority ${commits[d].priority ?? 0})`).join(', ')}.`,
      });
    }
    if (trade_offs.length < maxTradeoffs)
      trade_offs.push({
        commitment_id: c.id,
        kind: 'add_capacity',
        drop_ids: [],
        resource_changes: shortfall.map(({ i, amt }) => ({ resource_id: resources[i].id, amount: r2(amt) })),
        detail: `Keep ${c.id} without dropping anything by adding ${shortfall.map(({ i, amt }) => `${r2(amt)}${resources[i].unit ? ` ${resources[i].unit}` : ''} of ${resources[i].id}`).join(' and ')}.`,
      });
  }

  return {
    surface: ctx.surface ?? input.surface ?? null,
    utilization,
    over_commitment: {
      over: overIds.length > 0 || byDate.length > 0,
      resource_ids: overIds,
      by_date: byDate,
      past_due: pastDue,
    },
    feasible_subset: {
      kept,
      deferred: deferred.map(({ k, blocking }) => ({
        commitment_id: commits[k].id,
        blocking_resource_ids: blocking.map((i) => resources[i].id),
      })),
      remaining: resources.map((r, i) => ({ resource_id: r.id, amount: r2(left[i]) })),
    },
    trade_offs,
    warnings,
    integration_hints: [
      {
        kind: 'review',
        target: 'trade_offs',
        detail: 'Let the commitment owners pick a trade-off; the service changes nothing.',
      },
      {
        kind: 'calendar',
        target: 'over_commitment.by_date',
        detail: byDate.length
          ? "Flag the first dated breach per resource on the owner's calendar."
          : 'No dated breach.',
      },
    ],
  };
}

export const resourcesCommitmentReason = defineReasoning({
  path: '/resources/commitment/reason',
  summary: 'Detect over-commitment of time, money and people and choose a feasible subset with trade-offs',
  request: resourcesCommitmentRequest,
  response: resourcesCommitmentResponse,
  compile: reasonCommitments,
  example: {
    surface: 'planner',
    now: '2026-05-04T09:00:00',
    timezone: 'America/New_York',
    resources: [
      {
        id: 'team-hours',
        kind: 'time',
        capacity: 120,
        unit: 'hours',
        period_start: '2026-05-04',
        period_end: '2026-05-29',
      },
      { id: 'budget', kind: 'money', capacity: 20000, unit: 'USD' },
      { id: 'designer', kind: 'people', capacity: 40, unit: 'hours' },
    ],
    commitments: [
      {
        id: 'launch',
        title: 'Product launch',
        priority: 5,
        must_keep: true,
        due: '2026-05-20',
        demands: [
          { resource_id: 'team-hours', amount: 70 },
          { resource_id: 'budget', amount: 8000 },
          { resource_id: 'designer', amount: 20 },
        ],
      },
      {
        id: 'rebrand',
        title: 'Website rebrand',
        priority: 3,
        due: '2026-05-15',
        demands: [
          { resource_id: 'team-hours', amount: 30 },
          { resource_id: 'designer', amount: 30 },
        ],
      },
      {
        id: 'conference',
        title: 'Conference booth',
        priority: 2,
        due: '2026-05-28',
        demands: [
          { resource_id: 'budget', amount: 9000 },
          { resource_id: 'team-hours', amount: 15 },
        ],
      },
      {
        id: 'blog',
        title: 'Blog series',
        priority: 1,
        demands: [
          { resource_id: 'team-hours', amount: 20 },
          { resource_id: 'designer', amount: 5 },
        ],
      },
    ],
    preferences: { max_tradeoffs: 5 },
  },
});

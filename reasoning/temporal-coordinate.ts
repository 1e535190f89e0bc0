import type { DateTime } from 'luxon';
import { defineReasoning } from './types';
import {
  temporalCoordinateRequest,
  temporalCoordinateResponse,
  type TemporalCoordinateRequest as Req,
  type TemporalCoordinateResponse as Res,
} from '../schema/reasoning/temporal-coordinate';
import { buildDag, findCycles, topoOrder } from './lib/dag';
import { parseInstant, resolveZone } from './lib/luxon-time';
import { deadlineOf, extractDueHint } from './lib/due-hints';
import { finishCoordinate } from './lib/coordinate-output';
import {
  buildTimeline,
  horizonEnd,
  levelOf,
  lowerBoundBy,
  renderTime,
  type Conflict,
  type Segment,
} from './lib/coordinate-windows';

const MIN = 60_000;
const SCAN = 48; // candidate segments examined per task: keeps placement O(n log n)
const CLOSED = /^(done|completed?|cancell?ed|skipped|archived)$/i;
const HELD = /^(blocked|waiting|on[ _-]?hold|paused)$/i;
/** A Map, not an object literal: a word such as `constructor` or `__proto__` must not find Object.prototype's members. */
const IMPORTANCE = new Map(
  Object.entries({
    critical: 4,
    urgent: 4,
    high: 3,
    medium: 2,
    normal: 2,
    low: 1,
    trivial: 0.5,
  }),
);

function importanceOf(v: string | number | undefined): number {
  if (typeof v === 'number') return Math.min(4, v / 2.5);
  if (!v) return 2;
  const n = Number(v);
  return Number.isFinite(n) && v.trim() !== ''
    ? Math.min(4, Math.max(0, n / 2.5))
    : (IMPORTANCE.get(v.trim().toLowerCase()) ?? 2);
}

export function compileTemporalCoordinate(input: Req, _ctx: { surface?: string } = {}): Res {
  const tz = resolveZone(input.timezone);
  const now = parseInstant(input.now, tz);
  const prefs = input.preferences ?? {};
  const maxBlocks = prefs.max_blocks ?? 20;
  const maxConflicts = prefs.max_conflicts ?? 50;
  const conflicts: Conflict[] = [];
  const conflict = (c: Omit<Conflict, 'id'>) => {
    if (conflicts.length < maxConflicts) conflicts.push({ id: `x${conflicts.length + 1}`, ...c });
  };
  const hEnd = horizonEnd(input.horizon, now, tz);
  const tl = buildTimeline(input, tz, now, hEnd, !!prefs.protect_focus, conflict);
  const { segments, budget } = tl;

  const tasks = input.tasks;
  const n = tasks.length;
  const dag = buildDag(
    tasks.map((t) => t.id),
    tasks.map((t) => t.dependencies ?? []),
  );
  const first = new Map<string, number>();
  const dup = new Uint8Array(n);
  tasks.forEach((t, i) => {
    if (first.has(t.id)) {
      dup[i] = 1;
      conflict({
        kind: 'duplicate_task_id',
        severity: 'warning',
        detail: `task id "${t.id}" appears more than once; only the first is planned`,
        task_ids: [t.id],
        event_indexes: [],
        window_indexes: [],
      });
    } else first.set(t.id, i);
  });
  for (const m of dag.missing) {
    if (!dup[m.node])
      conflict({
        kind: 'unknown_dependency',
        severity: 'warning',
        detail: `task "${tasks[m.node].id}" depends on unknown id "${m.ref}" (ignored)`,
        task_ids: [tasks[m.node].id],
        event_indexes: [],
        window_indexes: [],
      });
  }
  const inCycle = new Uint8Array(n);
  for (const comp of findCycles(dag)) {
    comp.forEach((i) => (inCycle[i] = 1));
    const ids = comp.slice(0, 20).map((i) => tasks[i].id);
    conflict({
      kind: 'dependency_cycle',
      severity: 'error',
      detail: `dependency cycle: ${ids.join(' → ')}${comp.length > 20 ? ' …' : ''}`,
      task_ids: ids,
      event_indexes: [],
      window_indexes: [],
    });
  }

  const closed = tasks.map((t, i) => !dup[i] && CLOSED.test(t.status?.trim() ?? ''));
  const open = (i: number) => !dup[i] && !closed[i];
  const mins = (i: number) => tasks[i].minutes ?? 30;
  const dueCache = new Map<string, DateTime | null>();
  const deadline: (DateTime | null)[] = tasks.map((t) => {
    if (!t.due_hint) return null;
    if (!dueCache.has(t.due_hint)) {
      const h = extractDueHint(t.due_hint);
      dueCache.set(t.due_hint, h ? deadlineOf(h.parsed, now, tz) : null);
    }
    return dueCache.get(t.due_hint)!;
  });
  const baseMs = now?.toMillis() ?? tl.horizonStart;
  const urgency = (i: number) => {
    const d = deadline[i];
    if (!d || baseMs === null) return 0;
    const hrs = (d.toMillis() - baseMs) / 3_600_000;
    return hrs < 0 ? 4 : hrs < 24 ? 3 : hrs < 72 ? 2 : hrs < 168 ? 1 : 0;
  };
  const curEnergy = levelOf(input.energy);
  const score = tasks.map((t, i) => {
    const s =
      importanceOf(t.importance) +
      1.2 * urgency(i) +
      (/progress/i.test(t.status ?? '') ? 1 : 0) +
      (input.energy && levelOf(t.energy) === curEnergy ? 0.5 : 0) +
      0.3 * Math.min(5, dag.succ[i].length);
    return Math.round(s * 100) / 100;
  });
  const { order: topo } = topoOrder(dag, (i) => score[i]);
  const order = topo.filter(open);
  if (prefs.prefer_short_starts) {
    const k = order
      .slice(0, 50)
      .findIndex((i) => mins(i) <= 30 && !HELD.test(tasks[i].status ?? '') && dag.pred[i].every((p) => !open(p)));
    if (k > 0) order.unshift(...order.splice(k, 1));
  }

  // Greedy placement in priority/topological order; full segments are skipped with a jump table.
  const jump = new Int32Array(segments.length + 1).map((_, k) => k);
  const find = (k: number): number => {
    let r = k;
    while (jump[r] !== r) r = jump[r];
    while (jump[k] !== r) [k, jump[k]] = [jump[k], r];
    return r;
  };
  const remainingBudget = (s: Segment) => (s.window === null ? Number.POSITIVE_INFINITY : budget[s.window]);
  const longest = segments.reduce((m, s) => Math.max(m, (s.end - s.start) / MIN), 0);
  const endOf = new Float64Array(n).fill(Number.NaN);
  const blockOf: (string | null)[] = new Array(n).fill(null);
  const unplaced = new Uint8Array(n);
  const proposals: Res['schedule_proposals'] = [];
  const unscheduled: Res['unscheduled'] = [];
  const skip = (i: number, reason: string) => {
    unplaced[i] = 1;
    unscheduled.push({ task_id: tasks[i].id, reason });
  };
  const floatLeft = tl.floating.map((f) => f.capacity);
  for (const i of order) {
    const t = tasks[i];
    if (HELD.test(t.status ?? '')) {
      skip(i, `status ${t.status}`);
      continue;
    }
    const waits = dag.pred[i].find((p) => open(p) && unplaced[p]);
    if (waits !== undefined) {
      skip(i, `waits on "${tasks[waits].id}", which is not scheduled`);
      continue;
    }
    if (proposals.length >= maxBlocks) {
      skip(i, `max_blocks (${maxBlocks}) reached`);
      continue;
    }
    let ready = tl.horizonStart ?? Number.NEGATIVE_INFINITY;
    for (const p of dag.pred[i]) if (open(p) && Number.isFinite(endOf[p])) ready = Math.max(ready, endOf[p]);
    const need = mins(i) * MIN;
    const level = levelOf(t.energy);
    const dl = deadline[i]?.toMillis() ?? null;
    let best: { k: number; start: number; cost: number } | null = null;
    let k = find(lowerBoundBy(segments, ready, (s) => s.end));
    for (let seen = 0; k < segments.length && seen < SCAN; k = find(k + 1), seen++) {
      const s = segments[k];
      if (s.end - s.cursor < 5 * MIN || remainingBudget(s) < 5) {
        jump[k] = k + 1;
        continue;
      }
      const start = Math.max(s.cursor, ready);
      if (start + need > s.end || remainingBudget(s) < mins(i)) continue;
      if (prefs.protect_focus && level === 2 && s.end - s.start < 45 * MIN) continue;
      const energyPenalty = s.energy === level ? 0 : s.energy > level ? 0.25 : 1.5;
      const late = dl !== null && start + need > dl ? 1000 : 0;
      const cost = (start - (tl.horizonStart ?? start)) / 3_600_000 + 2 * energyPenalty + late;
      if (!best || cost < best.cost) best = { k, start, cost };
      if (cost === 0) break;
    }
    const reasons = [`importance ${t.importance ?? 'medium'}`];
    if (deadline[i]) reasons.push(`due ${deadline[i]!.toISODate()} (${t.due_hint})`);
    const deps = dag.pred[i].filter((p) => blockOf[p]).map((p) => blockOf[p]!);
    if (deps.length)
      reasons.push(
        `after ${dag.pred[i]
          .filter((p) => blockOf[p])
          .map((p) => tasks[p].id)
          .join(', ')}`,
      );
    if (prefs.prefer_short_starts && proposals.length === 0 && mins(i) <= 30) reasons.push('short start');
    const blockId = `b${proposals.length + 1}`;
    const base = {
      block_id: blockId,
      task_id: t.id,
      title: t.title ?? t.id,
      project: t.project ?? null,
      minutes: mins(i),
      depends_on_blocks: deps,
      score: score[i],
    };
    const dueOut = deadline[i]?.toISO({ suppressMilliseconds: true }) ?? null;
    if (best) {
      const s = segments[best.k];
      s.cursor = best.start + need;
      if (s.window !== null) budget[s.window] -= mins(i);
      endOf[i] = s.cursor;
      blockOf[i] = blockId;
      const match = s.energy === level ? 'exact' : s.energy > level ? 'above' : 'below';
      reasons.push(`energy ${match}`);
      if (dl !== null && s.cursor > dl)
        conflict({
          kind: 'due_at_risk',
          severity: 'warning',
          detail: `"${t.id}" ends after its due time ${dueOut}`,
          task_ids: [t.id],
          event_indexes: [],
          window_indexes: s.window === null ? [] : [s.window],
        });
      proposals.push({
        ...base,
        start: renderTime(best.start, s.zone),
        end: renderTime(s.cursor, s.zone),
        window_index: s.window,
        window_label: s.label,
        energy_match: match,
        due: dueOut,
        reasons,
      });
      continue;
    }
    const f = tl.floating.findIndex((fw, j) => floatLeft[j] >= mins(i) && fw.energy >= level);
    const fj = f >= 0 ? f : tl.floating.findIndex((_, j) => floatLeft[j] >= mins(i));
    if (fj >= 0) {
      const fw = tl.floating[fj];
      floatLeft[fj] -= mins(i);
      blockOf[i] = blockId;
      const match = fw.energy === level ? 'exact' : fw.energy > level ? 'above' : 'below';
      proposals.push({
        ...base,
        start: null,
        end: null,
        window_index: fw.window,
        window_label: fw.label,
        energy_match: match,
        due: dueOut,
        reasons: [...reasons, `energy ${match}`, 'floating window (no clock times)'],
      });
      continue;
    }
    if (mins(i) > longest && !tl.floating.some((fw) => fw.capacity >= mins(i))) {
      conflict({
        kind: 'task_too_long',
        severity: 'warning',
        detail: `"${t.id}" needs ${mins(i)} min; the longest free block is ${Math.round(longest)} min`,
        task_ids: [t.id],
        event_indexes: [],
        window_indexes: [],
      });
      skip(i, 'longer than any free block');
    } else skip(i, segments.length || tl.floating.length ? 'no free time left before the horizon' : 'no availability');
    if (dl !== null && (tl.horizonEnd === null || dl <= tl.horizonEnd))
      conflict({
        kind: 'due_at_risk',
        severity: 'error',
        detail: `"${t.id}" is due ${dueOut} but is not scheduled`,
        task_ids: [t.id],
        event_indexes: [],
        window_indexes: [],
      });
  }
  const inOrder = new Uint8Array(n);
  for (const i of topo) inOrder[i] = 1;
  for (let i = 0; i < n; i++)
    if (open(i) && !inOrder[i]) skip(i, inCycle[i] ? 'in a dependency cycle' : 'waits on a task in a dependency cycle');

  const taskMinutes =
    order.reduce((a, i) => a + mins(i), 0) + tasks.reduce((a, _t, i) => a + (open(i) && !inOrder[i] ? mins(i) : 0), 0);
  const planned = proposals.reduce((a, p) => a + p.minutes, 0);
  if (!segments.length && !tl.floating.length && order.length) {
    conflict({
      kind: 'no_availability',
      severity: 'error',
      detail: 'no available time inside the horizon',
      task_ids: [],
      event_indexes: [],
      window_indexes: [],
    });
  } else if (taskMinutes > tl.freeMinutes) {
    conflict({
      kind: 'over_commitment',
      severity: 'error',
      detail: `open tasks need ${taskMinutes} min but only ${tl.freeMinutes} min are free (${taskMinutes - tl.freeMinutes} min over)`,
      task_ids: [],
      event_indexes: [],
      window_indexes: [],
    });
  }
  return finishCoordinate({
    input,
    now,
    tl,
    proposals,
    unscheduled,
    order: order.map((i) => tasks[i].id),
    conflicts,
    taskMinutes,
    planned,
  });
}

export const temporalCoordinate = defineReasoning({
  path: '/temporal/coordinate',
  summary:
    'Place tasks into free windows around fixed events (dependencies, energy, importance, due hints) and report conflicts and now/next/later buckets.',
  request: temporalCoordinateRequest,
  response: temporalCoordinateResponse,
  compile: compileTemporalCoordinate,
  example: {
    surface: 'planner',
    horizon: 'today',
    energy: 'high',
    now: '2026-04-27T08:30:00-04:00',
    timezone: 'America/New_York',
    available: [
      { label: 'morning focus', start: '2026-04-27T09:00:00-04:00', end: '2026-04-27T12:00:00-04:00', energy: 'high' },
      { label: 'afternoon', start: '2026-04-27T13:00:00-04:00', end: '2026-04-27T17:00:00-04:00', energy: 'low' },
    ],
    fixed_events: [
      { title: 'Standup', start: '2026-04-27T10:00:00-04:00', end: '2026-04-27T10:15:00-04:00' },
      { title: 'Design review', start: '2026-04-27T14:00:00-04:00', minutes: 60 },
      { title: '1:1 with Sam', start: '2026-04-27T14:30:00-04:00', end: '2026-04-27T15:00:00-04:00' },
    ],
    tasks: [
      {
        id: 'spec',
        title: 'Write API spec',
        project: 'billing',
        minutes: 90,
        energy: 'high',
        importance: 'high',
        due_hint: 'today',
      },
      {
        id: 'review',
        title: 'Review spec with Ana',
        project: 'billing',
        minutes: 30,
        energy: 'medium',
        importance: 'medium',
        dependencies: ['spec'],
      },
      { id: 'inbox', title: 'Clear inbox', minutes: 20, energy: 'low', importance: 'low' },
      { id: 'expenses', title: 'File expenses', minutes: 15, energy: 'low', importance: 'medium', due_hint: 'Friday' },
      {
        id: 'migrate',
        title: 'Plan data migration',
        project: 'billing',
        minutes: 60,
        energy: 'high',
        dependencies: ['rollout'],
      },
      { id: 'rollout', title: 'Rollout checklist', project: 'billing', minutes: 45, dependencies: ['migrate'] },
      { id: 'invoice', title: 'Send invoice', minutes: 10, status: 'done' },
      { id: 'deck', title: 'Update deck', minutes: 40, dependencies: ['brand-kit'] },
    ],
    preferences: { max_blocks: 8, protect_focus: true, prefer_short_starts: false },
  },
});

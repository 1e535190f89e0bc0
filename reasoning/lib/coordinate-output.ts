import type { DateTime } from 'luxon';
import type {
  TemporalCoordinateRequest as Req,
  TemporalCoordinateResponse as Res,
} from '../../schema/reasoning/temporal-coordinate';
import { parseInstant } from './luxon-time';
import { renderTime, type Timeline } from './coordinate-windows';

/**
 * Output assembly for /temporal/coordinate: now/next/later buckets relative to the request
 * clock (or the first proposed block when no clock is given), memory seeds and hints.
 */
export function finishCoordinate(a: {
  input: Req;
  now: DateTime | null;
  tl: Timeline;
  proposals: Res['schedule_proposals'];
  unscheduled: Res['unscheduled'];
  order: string[];
  conflicts: Res['conflicts'];
  taskMinutes: number;
  planned: number;
}): Res {
  const { input, now, tl, unscheduled, conflicts, taskMinutes, planned } = a;
  const zone = now?.zoneName ?? tl.segments[0]?.zone ?? 'UTC';
  const startMs = new Map(
    a.proposals.map((p) => [p.block_id, p.start ? parseInstant(p.start)!.toMillis() : Number.POSITIVE_INFINITY]),
  );
  const proposals = [...a.proposals].sort(
    (x, y) =>
      startMs.get(x.block_id)! - startMs.get(y.block_id)! || Number(x.block_id.slice(1)) - Number(y.block_id.slice(1)),
  );
  const firstTimed = proposals.find((p) => p.start);
  const ref = now ?? (firstTimed ? parseInstant(firstTimed.start) : null);
  const buckets: Res['buckets'] = { now: [], next: [], later: [] };
  for (const p of proposals) {
    const start = p.start ? parseInstant(p.start) : null;
    const item = { task_id: p.task_id, title: p.title, start: p.start, reason: p.reasons.slice(0, 2).join('; ') };
    if (!start || !ref) buckets.next.push(item);
    else if (start.toMillis() <= ref.toMillis() + 60 * 60_000 && buckets.now.length < 3)
      buckets.now.push({ ...item, reason: `starts ${start.toFormat('HH:mm')}; ${item.reason}` });
    else if (start.setZone(ref.zone).hasSame(ref, 'day')) buckets.next.push(item);
    else buckets.later.push(item);
  }
  const titles = new Map(input.tasks.map((t) => [t.id, t.title ?? t.id]));
  for (const u of unscheduled)
    buckets.later.push({
      task_id: u.task_id,
      title: titles.get(u.task_id) ?? u.task_id,
      start: null,
      reason: `unscheduled: ${u.reason}`,
    });

  const below = proposals.filter((p) => p.energy_match === 'below').length;
  const seeds: Res['memory_seeds'] = [];
  if (tl.freeMinutes > 0)
    seeds.push({
      id: 'seed-capacity',
      kind: 'capacity',
      text: `Planned ${planned} of ${tl.freeMinutes} free minutes; open work needs ${taskMinutes}.`,
    });
  if (below)
    seeds.push({
      id: 'seed-energy',
      kind: 'energy',
      text: `${below} block(s) sit in windows below the task's energy; consider moving deep work to high-energy windows.`,
    });
  const projects = new Map<string, number>();
  for (const p of proposals) if (p.project) projects.set(p.project, (projects.get(p.project) ?? 0) + p.minutes);
  const top = [...projects.entries()].sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1))[0];
  if (top)
    seeds.push({ id: 'seed-project', kind: 'focus', text: `Most planned time goes to ${top[0]} (${top[1]} min).` });
  const cycles = conflicts.filter((c) => c.kind === 'dependency_cycle').length;
  if (cycles)
    seeds.push({
      id: 'seed-cycles',
      kind: 'dependencies',
      text: `${cycles} dependency cycle(s) block planning until one dependency is dropped.`,
    });

  const hints: Res['integration_hints'] = [];
  if (proposals.length)
    hints.push({
      kind: 'calendar_hold',
      target: 'calendar',
      detail: `Create ${proposals.filter((p) => p.start).length} tentative hold(s) from schedule_proposals start/end; nothing is booked by this endpoint.`,
    });
  if (unscheduled.length)
    hints.push({
      kind: 'task_update',
      target: 'tasks',
      detail: `${unscheduled.length} task(s) stay unscheduled; surface their reasons in the task list.`,
    });
  if (conflicts.some((c) => c.severity === 'error'))
    hints.push({
      kind: 'notify',
      target: 'notifications',
      detail: 'Error-level conflicts need a human decision before holds are created.',
    });
  hints.push({
    kind: 'workflow',
    target: '/v1/ambient/continuity/compile',
    detail: 'Pass schedule_proposals as temporal_commitments to keep the continuity ledger in sync.',
  });

  return {
    summary: {
      horizon_start: tl.horizonStart === null ? null : renderTime(tl.horizonStart, zone),
      horizon_end: tl.horizonEnd === null ? null : renderTime(tl.horizonEnd, zone),
      free_minutes: tl.freeMinutes,
      task_minutes: taskMinutes,
      planned_minutes: planned,
      utilization: tl.freeMinutes > 0 ? Math.round((planned / tl.freeMinutes) * 1000) / 1000 : 0,
      scheduled_count: proposals.length,
      unscheduled_count: unscheduled.length,
    },
    buckets,
    schedule_proposals: proposals,
    order: a.order,
    unscheduled,
    conflicts,
    memory_seeds: seeds,
    integration_hints: hints,
  };
}

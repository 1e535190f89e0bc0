import { defineReasoning } from './types';
import {
  executionOrchestrateRequest,
  executionOrchestrateResponse,
  type ExecutionOrchestrateRequest,
  type ExecutionOrchestrateResponse,
} from '../schema/reasoning/execution-orchestrate';
import { MinHeap, bottomLevel, buildDag, criticalPath, findCycles, reach, topoOrder } from './lib/dag';

type Out = ExecutionOrchestrateResponse;
type Job = ExecutionOrchestrateRequest['jobs'][number];
const r2 = (x: number) => Math.round(x * 100) / 100;

/** First occurrence of each id wins; later duplicates are reported, not planned. */
export function uniqueById<T extends { id: string }>(items: readonly T[]): { kept: T[]; dropped: string[] } {
  const seen = new Set<string>();
  const kept: T[] = [];
  const dropped: string[] = [];
  for (const it of items) {
    if (seen.has(it.id)) dropped.push(it.id);
    else {
      seen.add(it.id);
      kept.push(it);
    }
  }
  return { kept, dropped };
}

/**
 * Plan barrier waves of parallel execution: jobs become ready when their prerequisites have
 * run; each wave takes ready jobs by longest remaining path (then priority, then input order)
 * up to max_concurrency and the resource capacities. Jobs behind a cycle, a missing
 * dependency or an impossible resource demand are blocked together with everything downstream.
 */
export function orchestrateExecution(input: ExecutionOrchestrateRequest, ctx: { surface?: string }): Out {
  const prefs = input.preferences ?? {};
  const C = prefs.max_concurrency ?? 4;
  const maxWaves = prefs.max_waves ?? 500;
  const defRetries = prefs.default_retries ?? 2;
  const every = prefs.checkpoint_every_minutes ?? 60;
  const { kept: jobs, dropped } = uniqueById(input.jobs);
  const n = jobs.length;
  const ids = jobs.map((j) => j.id);
  const dur = (i: number) => jobs[i].duration_minutes ?? 1;
  const capacity = new Map<string, number>();
  for (const r of input.resources ?? []) if (!capacity.has(r.name)) capacity.set(r.name, r.capacity);
  const warnings = dropped.map((d) => `duplicate job id "${d}" ignored`);
  const unknownRes = new Set<string>();

  const dag = buildDag(
    ids,
    jobs.map((j) => j.needs ?? []),
  );
  const cycles = findCycles(dag);
  const { order, stuck } = topoOrder(dag);
  const blocked = new Map<number, { reason: Out['blocked'][number]['reason']; refs: string[] }>();
  for (const m of dag.missing) {
    const b = blocked.get(m.node) ?? { reason: 'missing_dependency' as const, refs: [] };
    b.refs.push(m.ref);
    blocked.set(m.node, b);
  }
  for (const c of cycles)
    for (const v of c) if (!blocked.has(v)) blocked.set(v, { reason: 'dependency_cycle', refs: c.map((x) => ids[x]) });
  const demand = (j: Job) => {
    const m = new Map<string, number>();
    for (const r of j.resources ?? []) m.set(r.name, (m.get(r.name) ?? 0) + r.amount);
    return m;
  };
  const demands = jobs.map(demand);
  demands.forEach((d, i) => {
    for (const [name, amt] of d) {
      if (!capacity.has(name)) unknownRes.add(name);
      else if (amt > capacity.get(name)! && !blocked.has(i))
        blocked.set(i, { reason: 'resource_exceeds_capacity', refs: [name] });
    }
  });
  const roots = [...blocked.keys()].sort((a, b) => a - b);
  for (const v of reach(dag.succ, roots))
    if (!blocked.has(v))
      blocked.set(v, {
        reason: 'upstream_blocked',
        refs: dag.pred[v].filter((p) => blocked.has(p)).map((p) => ids[p]),
      });
  for (const v of stuck)
    if (!blocked.has(v)) blocked.set(v, { reason: 'upstream_blocked', refs: dag.pred[v].map((p) => ids[p]) });
  for (const name of [...unknownRes].sort())
    warnings.push(`resource "${name}" has no declared capacity; treated as unlimited`);

  const good = order.filter((v) => !blocked.has(v));
  const bl = bottomLevel(dag, good, dur);
  const prio = (i: number) => jobs[i].priority ?? 0;
  const less = (a: number, b: number) =>
    bl[a] !== bl[b] ? bl[a] > bl[b] : prio(a) !== prio(b) ? prio(a) > prio(b) : a < b;
  // Ready jobs are grouped by their demand on capacity-limited resources: jobs with the same
  // demand fit or fail together, so a wave skips a group that no longer fits in one step instead
  // of popping and re-pushing each of its jobs (a wave used to re-scan the same deferred jobs,
  // e.g. every GPU job behind a full GPU, which made resource-bound plans quadratic).
  const groupOf = new Int32Array(n);
  const groups: MinHeap[] = [];
  const groupIds = new Map<string, number>();
  for (const v of good) {
    const limited: [string, number][] = [];
    for (const e of demands[v]) if (capacity.has(e[0])) limited.push(e);
    const key = limited.length ? JSON.stringify(limited.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : '';
    let g = groupIds.get(key);
    if (g === undefined) {
      groupIds.set(key, (g = groups.length));
      groups.push(new MinHeap(less));
    }
    groupOf[v] = g;
  }
  // heads holds the best ready job of every non-empty group; entries that are no longer the head
  // of their group (a better job arrived, or it was picked) are skipped when popped.
  const heads = new MinHeap(less);
  const failed = new Uint8Array(groups.length);
  let ready = 0;
  const makeReady = (v: number) => {
    const g = groups[groupOf[v]];
    const head = g.peek();
    g.push(v);
    ready++;
    if (head === undefined || less(v, head)) heads.push(v);
  };
  const indeg = new Int32Array(n);
  for (const v of good) {
    indeg[v] = dag.pred[v].length;
    if (indeg[v] === 0) makeReady(v);
  }

  const waves: Out['waves'] = [];
  const schedule: Out['schedule'] = [];
  const waveOf = new Int32Array(n).fill(-1);
  const wavePicked: number[][] = [];
  let t = 0;
  while (ready && waves.length < maxWaves) {
    const used = new Map<string, number>();
    const picked: number[] = [];
    const misfits: number[] = [];
    // Ready jobs are taken in priority order; a job that does not fit rules out its whole group
    // for this wave. Bounded look-ahead (picks plus ruled-out groups) keeps each wave O(C log n).
    for (let tries = 0; heads.size && picked.length < C && tries < C + 64;) {
      const j = heads.pop()!;
      const gi = groupOf[j];
      const g = groups[gi];
      if (failed[gi] || g.peek() !== j) continue;
      tries++;
      let fits = true;
      for (const [name, amt] of demands[j]) {
        if (capacity.has(name) && !((used.get(name) ?? 0) + amt <= capacity.get(name)!)) {
          fits = false;
          break;
        }
      }
      if (!fits) {
        failed[gi] = 1;
        misfits.push(gi);
        continue;
      }
      for (const [name, amt] of demands[j]) used.set(name, (used.get(name) ?? 0) + amt);
      picked.push(j);
      g.pop();
      ready--;
      if (g.size) heads.push(g.peek()!);
    }
    for (const gi of misfits) {
      failed[gi] = 0;
      heads.push(groups[gi].peek()!);
    }
    wavePicked.push(picked);
    const w = waves.length + 1;
    const span = picked.reduce((m, j) => Math.max(m, dur(j)), 0);
    for (const j of picked) {
      waveOf[j] = w;
      schedule.push({ job_id: ids[j], wave: w, start_minute: r2(t), end_minute: r2(t + dur(j)) });
    }
    const resource_use = [...used]
      .filter(([name]) => capacity.has(name))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, u]) => ({ name, used: r2(u), capacity: capacity.get(name)! }));
    waves.push({
      wave: w,
      start_minute: r2(t),
      end_minute: r2(t + span),
      job_ids: picked.map((j) => ids[j]),
      resource_use,
    });
    t += span;
    for (const j of picked) for (const s of dag.succ[j]) if (!blocked.has(s) && --indeg[s] === 0) makeReady(s);
  }
  const unscheduled = good.filter((v) => waveOf[v] === -1).map((v) => ids[v]);
  if (unscheduled.length) warnings.push(`${unscheduled.length} runnable job(s) exceed max_waves=${maxWaves}`);

  const cp = criticalPath(dag, good, dur);
  const onCp = new Set(cp.path);
  const totalWork = good.reduce((s, v) => s + dur(v), 0);
  const checkpoints: Out['checkpoints'] = [];
  let since = 0;
  waves.forEach((w, k) => {
    since += w.end_minute - w.start_minute;
    const reasons: string[] = [];
    // Critical-path work is the costliest to redo, so it is protected once half the interval has passed.
    if (since >= every / 2 && wavePicked[k].some((j) => onCp.has(j))) reasons.push('critical_path_progress');
    if (wavePicked[k].some((j) => jobs[j].checkpoint)) reasons.push('requested');
    if (since >= every) reasons.push(`elapsed_${every}_minutes`);
    // No checkpoint after the final wave: the run is complete there.
    if (reasons.length && w.wave < waves.length) {
      checkpoints.push({ after_wave: w.wave, job_ids: w.job_ids, reasons });
      since = 0;
    }
  });
  const retry_plan: Out['retry_plan'] = good.map((v) => {
    const j = jobs[v];
    const retries = j.retries ?? (j.idempotent === false ? 0 : defRetries);
    return {
      job_id: j.id,
      max_attempts: 1 + retries,
      backoff_seconds: Array.from({ length: retries }, (_, k) => Math.min(900, 30 * 2 ** k)),
      idempotency_key: `job:${j.id}`,
      on_exhausted: dag.succ[v].length ? 'halt_downstream' : 'mark_failed_and_continue',
    };
  });

  return {
    surface: ctx.surface ?? input.surface ?? null,
    waves,
    schedule,
    critical_path: { job_ids: cp.path.map((v) => ids[v]), total_minutes: r2(cp.length) },
    makespan_minutes: r2(t),
    lower_bound_minutes: r2(Math.max(cp.length, totalWork / C)),
    blocked: [...blocked]
      .sort(([a], [b]) => a - b)
      .map(([v, b]) => ({ job_id: ids[v], reason: b.reason, refs: b.refs })),
    cycles: cycles.map((c) => c.map((v) => ids[v])),
    unscheduled_job_ids: unscheduled,
    retry_plan,
    checkpoints,
    warnings,
    integration_hints: [
      {
        kind: 'executor',
        target: 'waves',
        detail: `Run each wave's jobs in parallel (at most ${C}); start a wave only when the previous one finished.`,
      },
      {
        kind: 'retries',
        target: 'retry_plan',
        detail: 'Reuse idempotency_key across attempts so a retried job never duplicates its effect.',
      },
      {
        kind: 'checkpoint',
        target: 'checkpoints',
        detail: `${checkpoints.length} checkpoint(s); persist outputs there so a restart resumes from the last one.`,
      },
      {
        kind: 'blocked',
        target: 'blocked',
        detail: blocked.size ? `${blocked.size} job(s) cannot run until their blocker is fixed.` : 'Nothing blocked.',
      },
    ],
  };
}

export const executionOrchestrate = defineReasoning({
  path: '/execution/orchestrate',
  summary: 'Plan waves of parallel execution with critical path, retries and checkpoints',
  request: executionOrchestrateRequest,
  response: executionOrchestrateResponse,
  compile: orchestrateExecution,
  example: {
    surface: 'ops',
    intent: 'Nightly data refresh',
    jobs: [
      { id: 'extract-crm', duration_minutes: 20, resources: [{ name: 'db_conn', amount: 2 }] },
      { id: 'extract-billing', duration_minutes: 35, resources: [{ name: 'db_conn', amount: 2 }] },
      { id: 'extract-web', duration_minutes: 10, resources: [{ name: 'db_conn', amount: 1 }] },
      {
        id: 'transform',
        needs: ['extract-crm', 'extract-billing'],
        duration_minutes: 30,
        resources: [{ name: 'gpu', amount: 1 }],
      },
      {
        id: 'train',
        needs: ['transform'],
        duration_minutes: 90,
        resources: [{ name: 'gpu', amount: 2 }],
        checkpoint: true,
      },
      { id: 'backfill', duration_minutes: 240, resources: [{ name: 'gpu', amount: 8 }] },
      { id: 'publish', needs: ['train', 'extract-web'], duration_minutes: 5, idempotent: false },
      { id: 'notify', needs: ['publish', 'audit-log'], duration_minutes: 1 },
    ],
    resources: [
      { name: 'db_conn', capacity: 4 },
      { name: 'gpu', capacity: 2 },
    ],
    preferences: { max_concurrency: 3, default_retries: 2, checkpoint_every_minutes: 60 },
  },
});

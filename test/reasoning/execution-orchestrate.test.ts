import fc from 'fast-check';
import { executionOrchestrate as ep } from '../../reasoning/execution-orchestrate';
import { expectCompilesCleanly, expectRejectsAt } from './properties';

const run = (body: unknown) => ep.compile(ep.request.parse(body), {});

describe('POST /execution/orchestrate', () => {
  test('golden: waves respect dependencies, concurrency and resources', () => {
    const out = run(ep.example);
    ep.response.parse(out);
    // db_conn capacity 4: both 2-connection extracts fit, the 1-connection one waits
    expect(out.waves[0].job_ids).toEqual(['extract-billing', 'extract-crm']);
    expect(out.waves[0].resource_use).toEqual([{ name: 'db_conn', used: 4, capacity: 4 }]);
    expect(out.waves.map((w) => w.job_ids)).toEqual([
      ['extract-billing', 'extract-crm'],
      ['transform', 'extract-web'],
      ['train'],
      ['publish'],
    ]);
    expect(out.critical_path).toEqual({
      job_ids: ['extract-billing', 'transform', 'train', 'publish'],
      total_minutes: 160,
    });
    expect(out.makespan_minutes).toBe(160);
    expect(out.blocked).toEqual([
      { job_id: 'backfill', reason: 'resource_exceeds_capacity', refs: ['gpu'] },
      { job_id: 'notify', reason: 'missing_dependency', refs: ['audit-log'] },
    ]);
    const publish = out.retry_plan.find((r) => r.job_id === 'publish')!;
    expect(publish.max_attempts).toBe(1); // not idempotent
    expect(out.retry_plan.find((r) => r.job_id === 'train')!.backoff_seconds).toEqual([30, 60]);
    expect(out.checkpoints.find((c) => c.after_wave === 3)!.reasons).toContain('requested');
  });

  test('cycles block their members and everything downstream; max_waves caps', () => {
    const out = run({
      jobs: [{ id: 'a', needs: ['b'] }, { id: 'b', needs: ['a'] }, { id: 'c', needs: ['b'] }, { id: 'd' }],
    });
    expect(out.cycles).toEqual([['a', 'b']]);
    expect(out.blocked.map((b) => [b.job_id, b.reason])).toEqual([
      ['a', 'dependency_cycle'],
      ['b', 'dependency_cycle'],
      ['c', 'upstream_blocked'],
    ]);
    expect(out.schedule.map((s) => s.job_id)).toEqual(['d']);
    const chain = run({
      jobs: [{ id: 'x' }, { id: 'y', needs: ['x'] }, { id: 'z', needs: ['y'] }],
      preferences: { max_waves: 2 },
    });
    expect(chain.waves).toHaveLength(2);
    expect(chain.unscheduled_job_ids).toEqual(['z']);
  });

  test('malformed requests name the bad field path', () => {
    expectRejectsAt(ep.request, {}, 'jobs');
    expectRejectsAt(ep.request, { jobs: [{ id: '' }] }, 'jobs.0.id');
    expectRejectsAt(ep.request, { jobs: [{ id: 'a', duration_minutes: -1 }] }, 'jobs.0.duration_minutes');
    expectRejectsAt(ep.request, { jobs: [{ id: 'a', resources: [{ name: 'gpu' }] }] }, 'jobs.0.resources.0.amount');
    expectRejectsAt(
      ep.request,
      { jobs: [{ id: 'a' }], preferences: { max_concurrency: 0 } },
      'preferences.max_concurrency',
    );
    expectRejectsAt(ep.request, { jobs: [{ id: 'a', needs: Array(201).fill('x') }] }, 'jobs.0.needs');
  });

  const ids = ['j1', 'j2', 'j3', 'j4', 'j5', 'j6', 'j7', 'j8'];
  const job = fc.record(
    {
      id: fc.constantFrom(...ids),
      needs: fc.array(fc.constantFrom(...ids, 'ghost'), { maxLength: 3 }),
      duration_minutes: fc.integer({ min: 0, max: 120 }),
      resources: fc.array(
        fc.record({ name: fc.constantFrom('cpu', 'gpu', 'other'), amount: fc.integer({ min: 0, max: 5 }) }),
        { maxLength: 2 },
      ),
      retries: fc.integer({ min: 0, max: 5 }),
      idempotent: fc.boolean(),
      checkpoint: fc.boolean(),
      priority: fc.integer({ min: -3, max: 3 }),
    },
    { requiredKeys: ['id'] },
  );
  const body = fc.record(
    {
      jobs: fc.array(job, { minLength: 1, maxLength: 20 }),
      resources: fc.array(
        fc.record({ name: fc.constantFrom('cpu', 'gpu'), capacity: fc.integer({ min: 0, max: 6 }) }),
        { maxLength: 2 },
      ),
      preferences: fc.record(
        {
          max_concurrency: fc.integer({ min: 1, max: 5 }),
          max_waves: fc.integer({ min: 1, max: 10 }),
          checkpoint_every_minutes: fc.integer({ min: 1, max: 100 }),
        },
        { requiredKeys: [] },
      ),
    },
    { requiredKeys: ['jobs'] },
  );

  test('properties: total, deterministic, valid, capped, consistent', () => {
    fc.assert(
      fc.property(body, (raw) => {
        const input = ep.request.parse(raw);
        const out = expectCompilesCleanly(ep, input);
        const C = input.preferences?.max_concurrency ?? 4;
        expect(out.waves.length).toBeLessThanOrEqual(input.preferences?.max_waves ?? 500);
        const jobIds = new Set(input.jobs.map((j) => j.id));
        const waveOf = new Map(out.schedule.map((s) => [s.job_id, s.wave]));
        const caps = new Map<string, number>();
        for (const r of input.resources ?? []) if (!caps.has(r.name)) caps.set(r.name, r.capacity);
        for (const w of out.waves) {
          expect(w.job_ids.length).toBeLessThanOrEqual(C);
          expect(w.job_ids.length).toBeGreaterThan(0);
          for (const u of w.resource_use) expect(u.used).toBeLessThanOrEqual(u.capacity);
        }
        const first = new Map<string, (typeof input.jobs)[number]>();
        for (const j of input.jobs) if (!first.has(j.id)) first.set(j.id, j);
        for (const [id, w] of waveOf)
          for (const d of first.get(id)!.needs ?? []) expect(waveOf.get(d)!).toBeLessThan(w);
        const refs = [
          ...out.schedule.map((s) => s.job_id),
          ...out.critical_path.job_ids,
          ...out.blocked.map((b) => b.job_id),
          ...out.cycles.flat(),
          ...out.unscheduled_job_ids,
          ...out.retry_plan.map((r) => r.job_id),
          ...out.checkpoints.flatMap((c) => c.job_ids),
        ];
        for (const r of refs) expect(jobIds.has(r)).toBe(true);
        for (const c of out.checkpoints) expect(c.after_wave).toBeLessThanOrEqual(out.waves.length);
        // every first-seen job is scheduled, blocked or unscheduled exactly once
        const seen = [...waveOf.keys(), ...out.blocked.map((b) => b.job_id), ...out.unscheduled_job_ids];
        expect(new Set(seen).size).toBe(seen.length);
        expect(seen.length).toBe(first.size);
        expect(out.lower_bound_minutes).toBeLessThanOrEqual(
          out.makespan_minutes + 1e-6 + (out.unscheduled_job_ids.length ? Infinity : 0),
        );
      }),
      { numRuns: 100 },
    );
  });
});

import fc from 'fast-check';
import { codebaseTaskPlan as ep } from '../../reasoning/codebase-task-plan';
import { expectCompilesCleanly, expectRejectsAt } from './properties';

const run = (body: unknown) => ep.compile(ep.request.parse(body), {});

describe('POST /codebase/task/plan', () => {
  test('golden: dependency order, frozen paths, risk and tests', () => {
    const out = run(ep.example);
    ep.response.parse(out);
    const order = out.change_plan.map((c) => c.path);
    // config before session (session imports config); session before its importers
    expect(order.indexOf('src/config.ts')).toBeLessThan(order.indexOf('src/auth/session.ts'));
    expect(order.indexOf('src/auth/session.ts')).toBeLessThan(order.indexOf('src/auth/login.ts'));
    const byPath = Object.fromEntries(out.change_plan.map((c) => [c.path, c]));
    expect(byPath['src/auth/session.ts']).toMatchObject({ action: 'modify', depends_on: ['src/config.ts'] });
    expect(byPath['src/api/middleware.ts'].action).toBe('review'); // imports session (extensionless)
    expect(byPath['db/migrations/0007_sessions.sql'].action).toBe('review');
    expect(out.excluded_by_constraints).toEqual([
      { path: 'db/migrations/0007_sessions.sql', constraint: 'do not touch db/migrations' },
    ]);
    expect(byPath['src/auth/session.ts'].risk.level).toBe('medium');
    expect(byPath['src/auth/session.ts'].risk.factors.find((f) => f.name === 'untested')!.value).toBe(0);
    expect(out.test_plan.run).toContainEqual({ path: 'test/auth/session.test.ts', covers: ['src/auth/session.ts'] });
    expect(out.test_plan.write.map((w) => w.for_path)).toContain('src/config.ts');
    expect(out.external_deps).toEqual(['react']);
    expect(order).not.toContain('src/db/client.ts');
  });

  test('cycles are reported; max_files caps the plan', () => {
    const out = run({
      task: 'fix parser and lexer',
      files: [
        { path: 'parser.ts', deps: ['lexer.ts'] },
        { path: 'lexer.ts', deps: ['parser.ts'] },
        { path: 'main.ts', deps: ['parser.ts'] },
      ],
      preferences: { max_files: 2 },
    });
    expect(out.cycles).toEqual([['parser.ts', 'lexer.ts']]);
    expect(out.change_plan).toHaveLength(2);
    expect(out.truncated).toBe(true);
  });

  test('malformed requests name the bad field path', () => {
    expectRejectsAt(ep.request, { files: [{ path: 'a' }] }, 'task');
    expectRejectsAt(ep.request, { task: 'x' }, 'files');
    expectRejectsAt(ep.request, { task: 'x', files: [{ path: '' }] }, 'files.0.path');
    expectRejectsAt(ep.request, { task: 'x', files: [{ path: 'a', lines: -3 }] }, 'files.0.lines');
    expectRejectsAt(ep.request, { task: 'x', files: [{ path: 'a', deps: 'b' }] }, 'files.0.deps');
    expectRejectsAt(
      ep.request,
      { task: 'x', files: [{ path: 'a' }], preferences: { max_files: 'many' } },
      'preferences.max_files',
    );
  });

  const P = [
    'src/auth/session.ts',
    'src/auth/login.ts',
    'src/api/index.ts',
    'test/auth.test.ts',
    'src/ui/Settings.tsx',
    'db/migrations/1.sql',
    'package.json',
  ];
  const file = fc.record(
    {
      path: fc.constantFrom(...P),
      lines: fc.integer({ min: 0, max: 2000 }),
      deps: fc.array(fc.constantFrom(...P, 'src/auth/session', 'lodash'), { maxLength: 3 }),
      churn: fc.integer({ min: 0, max: 40 }),
      kind: fc.constantFrom('source', 'test', 'config'),
    },
    { requiredKeys: ['path'] },
  );
  test('properties: total, deterministic, valid, capped, referentially closed', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('fix auth session login', 'settings ui', 'migrations', 'nothing relevant'),
        fc.array(file, { minLength: 1, maxLength: 15 }),
        fc.array(fc.constantFrom(...P), { maxLength: 2 }),
        fc.constantFrom([], ['do not touch src/auth'], ['package.json is frozen']),
        fc.integer({ min: 1, max: 6 }),
        (task, files, focus_paths, constraints, max_files) => {
          const input = ep.request.parse({ task, files, focus_paths, constraints, preferences: { max_files } });
          const out = expectCompilesCleanly(ep, input);
          expect(out.change_plan.length).toBeLessThanOrEqual(max_files);
          expect(out.test_plan.run.length).toBeLessThanOrEqual(max_files);
          const paths = new Set(files.map((f) => f.path));
          const planned = new Set(out.change_plan.map((c) => c.path));
          expect(planned.size).toBe(out.change_plan.length);
          const pos = new Map(out.change_plan.map((c, k) => [c.path, k]));
          for (const c of out.change_plan) {
            expect(paths.has(c.path)).toBe(true);
            for (const d of c.depends_on) expect(planned.has(d)).toBe(true);
            if (!out.cycles.length) for (const d of c.depends_on) expect(pos.get(d)!).toBeLessThan(pos.get(c.path)!);
          }
          for (const t of out.test_plan.run) {
            expect(paths.has(t.path)).toBe(true);
            for (const c of t.covers) expect(planned.has(c)).toBe(true);
          }
          for (const w of out.test_plan.write) expect(planned.has(w.for_path)).toBe(true);
          for (const e of out.excluded_by_constraints) expect(planned.has(e.path)).toBe(true);
          for (const c of out.cycles.flat()) expect(paths.has(c)).toBe(true);
        },
      ),
      { numRuns: 100 },
    );
  });
});

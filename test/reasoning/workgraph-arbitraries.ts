import fc from 'fast-check';

/** Arbitrary work items shared by the workgraph property tests (small id pool to force edges, cycles, duplicates). */
export const WG_IDS = ['w1', 'w2', 'w3', 'w4', 'w5', 'w6', 'w7', 'w8', 'w9'];
export const workItemArb = fc.record(
  {
    id: fc.constantFrom(...WG_IDS),
    title: fc.constantFrom('Write spec', 'Build api', 'Test api', 'Launch', 'Docs'),
    owner: fc.constantFrom('ana', 'ben', 'cho'),
    status: fc.constantFrom('todo', 'done', 'in_progress', 'blocked', 'Closed'),
    depends_on: fc.array(fc.constantFrom(...WG_IDS, 'ghost'), { maxLength: 3 }),
    estimate_hours: fc.integer({ min: 0, max: 40 }),
    due: fc.constantFrom('2026-05-01', '2026-05-10T12:00:00Z', 'not a date', '2026-06-01'),
    priority: fc.integer({ min: -2, max: 2 }),
  },
  { requiredKeys: ['id'] },
);
export const workItemsArb = fc.array(workItemArb, { minLength: 1, maxLength: 20 });
export const nowArb = fc.constantFrom(undefined, '2026-05-04T09:00:00Z', '2026-05-04T09:00:00', 'garbage');

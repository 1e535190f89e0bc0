import type { Harness } from '../helpers/harness';
import { withHarness } from '../helpers/with-harness';

// Issue 10 item 2: "Field types are string unless stated." reliability and cost are not stated, so
// strings (numeric and qualitative) work beside numbers; unmarked fields with a sensible default are optional.

let h: Harness;
let key: string;
withHarness({ scopes: ['runtime:chat'] }, (harness, k) => ((h = harness), (key = k)));

const plan = (providers: Array<Record<string, unknown>>) =>
  h.req('POST', '/v1/actions/plan', {
    key,
    body: {
      intent: 'Send the invoice email',
      action_hints: [{ title: 'Send invoice email', tool: 'email' }],
      available_providers: providers,
    },
  });
const route = (r: { body: { recommended_provider_route: Array<{ provider_id: string }> } }) =>
  r.body.recommended_provider_route.map((s) => s.provider_id);

test('reliability and cost as numeric strings give the same plan as the numbers', async () => {
  const numbers = await plan([
    { id: 'a', capabilities: ['email'], reliability: 0.95, cost: 2 },
    { id: 'b', capabilities: ['email'], reliability: 0.6, cost: 0.5 },
  ]);
  const strings = await plan([
    { id: 'a', capabilities: ['email'], reliability: '0.95', cost: '2' },
    { id: 'b', capabilities: ['email'], reliability: '60%', cost: '$0.50' },
  ]);
  expect(numbers.status).toBe(200);
  expect(strings.status).toBe(200);
  expect(strings.body).toEqual(numbers.body);
});

test('qualitative labels map to documented numbers (high reliability 0.85, low cost 1, high cost 10)', async () => {
  const labels = await plan([
    { id: 'steady', capabilities: ['email'], reliability: 'high', cost: 'low' },
    { id: 'flaky', capabilities: ['email'], reliability: 'Very_Low', cost: 'expensive' },
  ]);
  const numbers = await plan([
    { id: 'steady', capabilities: ['email'], reliability: 0.85, cost: 1 },
    { id: 'flaky', capabilities: ['email'], reliability: 0.1, cost: 10 },
  ]);
  expect(labels.status).toBe(200);
  expect(labels.body).toEqual(numbers.body);
  expect(route(labels)[0]).toBe('steady');
});

test('an unknown label or an out-of-range value is 400 naming the field', async () => {
  const unknown = await plan([{ id: 'x', reliability: 'stellar' }]);
  expect(unknown.status).toBe(400);
  expect(unknown.body.details[0]).toMatchObject({ path: 'body.available_providers.0.reliability' });
  expect(unknown.body.details[0].message).toMatch(/very low, low, medium/);
  const range = await plan([{ id: 'x', reliability: '1.5' }]);
  expect([range.status, range.body.details[0].path]).toEqual([400, 'body.available_providers.0.reliability']);
});

test('fields with a sensible default may be left out: temporal tasks, ambient recent_events', async () => {
  const temporal = await h.req('POST', '/v1/temporal/coordinate', {
    key,
    body: { available: [{ label: 'morning', start: '2026-05-01T09:00:00', end: '2026-05-01T12:00:00' }] },
  });
  expect(temporal.status).toBe(200);
  const ambient = await h.req('POST', '/v1/ambient/continuity/compile', {
    key,
    body: { active_goal: 'Ship the release' },
  });
  expect(ambient.status).toBe(200);
});

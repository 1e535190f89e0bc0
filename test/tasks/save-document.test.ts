import pino from 'pino';
import { sql } from 'slonik';
import { createModelRouter } from '../../activities/providers';
import { stepsOf } from '../../activities/store/tasks';
import { runAction } from '../../activities/tasks/actions';
import { startHarness, type Harness } from '../helpers/harness';
import { until } from './sse-client';

jest.setTimeout(120_000);

let h: Harness;
let key: string;
let tenantId: string;

beforeAll(async () => {
  h = await startHarness({ worker: true });
  const k = await h.key(['runtime:records']);
  key = k.apiKey;
  tenantId = k.tenantId;
});
afterAll(async () => {
  await h?.close();
});

async function runToEnd(taskId: string): Promise<any> {
  expect((await h.req('POST', `/v1/tasks/${taskId}/execute`, { key })).status).toBe(202);
  return until(async () => {
    const t = (await h.req('GET', `/v1/tasks/${taskId}`, { key })).body;
    return t.status !== 'running' && t.status !== 'pending' ? t : null;
  }, 60_000);
}

test('save stores the content as a tenant document: listed by GET /v1/documents and found by knowledge search', async () => {
  const text =
    'Sea otters hold hands while they sleep so that they do not drift apart. Their fur is the densest of any animal.';
  const created = await h.req('POST', '/v1/tasks', {
    key,
    body: { title: 'notes', steps: [{ id: 'note', title: 'Otter facts', action: 'save', args: { content: text } }] },
  });
  expect(created.status).toBe(201);
  const done = await runToEnd(created.body.id);
  expect(done.status).toBe('completed');
  const docId = done.steps[0].result as string;
  expect(docId).toMatch(/^doc_/);

  const list = await h.req('GET', '/v1/documents', { key });
  expect(list.status).toBe(200);
  const doc = list.body.data.find((d: any) => d.id === docId);
  expect(doc).toMatchObject({
    title: 'Otter facts',
    source_kind: 'ingest',
    media_type: 'text/plain',
    provenance: { source: `task:${created.body.id}/note`, task_id: created.body.id, step_id: 'note' },
  });
  expect(doc.excerpt).toContain('Sea otters hold hands');

  const search = await h.req('GET', `/v1/enterprise/knowledge/search?q=${encodeURIComponent('otters sleep')}`, { key });
  expect(search.status).toBe(200);
  expect(search.body.data.map((hit: any) => hit.document_id)).toContain(docId);

  // The record stays in task_outputs too, and another tenant sees neither.
  expect(
    await h.db.oneFirst(
      sql.unsafe`SELECT count(*)::int FROM task_outputs WHERE task_id = ${created.body.id} AND tenant_id = ${tenantId}`,
    ),
  ).toBe(1);
  const other = (await h.key(['runtime:records'])).apiKey;
  expect((await h.req('GET', '/v1/documents', { key: other })).body.data).toEqual([]);
  expect((await h.req('GET', `/v1/documents/${docId}`, { key: other })).status).toBe(404);
});

test('a retried save (same run and step) writes one document and returns its id again', async () => {
  const created = await h.req('POST', '/v1/tasks', {
    key,
    body: {
      title: 'retry',
      steps: [{ id: 's', title: 'Once only', action: 'save', args: { content: 'Idempotent penguins waddle once.' } }],
    },
  });
  const taskId = created.body.id as string;
  const [step] = await stepsOf(h.db, tenantId, [taskId]);
  const log = pino({ level: 'silent' });
  const deps = { config: h.config, db: h.db, log };
  const input = {
    deps,
    models: createModelRouter(h.config, { log }),
    tenantId,
    taskId,
    runId: 'run-retry-1',
    step,
    args: step.args,
    depResults: {},
    signal: new AbortController().signal,
  };
  // Two attempts of the same activity (the first one's completion was never recorded).
  const first = await runAction('save', input);
  const second = await runAction('save', input);
  expect(first).toMatch(/^doc_/);
  expect(second).toBe(first);
  const count = (source: string) =>
    h.db.oneFirst(
      sql.unsafe`SELECT count(*)::int FROM documents WHERE tenant_id = ${tenantId} AND provenance->>'source' = ${source}`,
    );
  expect(await count(`task:${taskId}/s`)).toBe(1);
  // Another run of the step is another save: a new record and document.
  const third = await runAction('save', { ...input, runId: 'run-retry-2' });
  expect(third).not.toBe(first);
  expect(await count(`task:${taskId}/s`)).toBe(2);
});

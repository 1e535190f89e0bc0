import { TypedSearchAttributes } from '@temporalio/common';
import { randomToken } from '../../activities/store/ids';
import { SvcKind, SvcSurface, SvcTenant } from '../../workflows/search-attributes';
import { startHarness, type Harness } from '../helpers/harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ worker: true });
});
afterAll(async () => h?.close());

test('the worker runs the bundled smoke workflow with our search attributes', async () => {
  const tenant = `ten_${randomToken(8)}`;
  const handle = await h.client.workflow.start('smokeWorkflow', {
    taskQueue: h.taskQueue,
    workflowId: `smoke-${randomToken(8)}`,
    args: [{ message: 'hi' }],
    typedSearchAttributes: new TypedSearchAttributes([
      { key: SvcTenant, value: tenant },
      { key: SvcKind, value: 'smoke' },
      { key: SvcSurface, value: 'dev' },
    ]),
    memo: { title: 'smoke test' },
  });
  const result = await handle.result();
  expect(result).toEqual({ echoed: 'echo: hi', workflowId: handle.workflowId, tenant });
  // Visibility: the operator can list by tenant and kind.
  let found: string[] = [];
  for (let i = 0; i < 50 && found.length === 0; i++) {
    found = [];
    for await (const wf of h.client.workflow.list({ query: `SvcTenant = "${tenant}" AND SvcKind = "smoke"` }))
      found.push(wf.workflowId);
    if (!found.length) await new Promise((r) => setTimeout(r, 200));
  }
  expect(found).toEqual([handle.workflowId]);
  const desc = await handle.describe();
  expect(await desc.memo).toEqual({ title: 'smoke test' });
});

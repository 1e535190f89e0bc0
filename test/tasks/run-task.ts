import type { Harness } from '../helpers/harness';
import { until } from './sse-client';

/** Creates a task through the API, starts it (202 expected) and polls until it completed or failed; returns that task. */
export async function runTask(h: Harness, key: string, body: unknown): Promise<any> {
  const t = (await h.req('POST', '/v1/tasks', { key, body })).body;
  expect((await h.req('POST', `/v1/tasks/${t.id}/execute`, { key })).status).toBe(202);
  return until(async () => {
    const r = (await h.req('GET', `/v1/tasks/${t.id}`, { key })).body;
    return r.status === 'completed' || r.status === 'failed' ? r : null;
  }, 60_000);
}

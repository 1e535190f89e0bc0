/**
 * The fault test's clients, written the way a careful user writes one: network errors, 502/503/504
 * (honouring Retry-After) and 409 "still in progress" are retried with the same Idempotency-Key, a
 * bounded number of times. Everything they saw is counted in `Stats` for the checker.
 */
import { openStream, type SseEvent } from '../tasks/sse-client';

export interface Stats {
  requests: number;
  networkErrors: number;
  byStatus: Record<number, number>;
  /** 503 answers without a Retry-After header (the contract says every 503 carries one). */
  noRetryAfter: number;
}

export interface Outcome {
  status: number;
  body: any;
}

export const newStats = (): Stats => ({ requests: 0, networkErrors: 0, byStatus: {}, noRetryAfter: 0 });
const sleep = (ms: number) => new Promise((res) => setTimeout(res, ms));

/** Where the clients go: filled once the cluster is up. */
export const target = { base: '', key: '' };

export async function call(method: string, p: string, body: unknown, stats: Stats, idem?: string): Promise<Outcome> {
  for (let attempt = 0; attempt < 90; attempt++) {
    stats.requests++;
    try {
      const r = await fetch(target.base + p, {
        method,
        headers: {
          authorization: `Bearer ${target.key}`,
          'content-type': 'application/json',
          ...(idem ? { 'idempotency-key': idem } : {}),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await r.text();
      const parsed = text ? JSON.parse(text) : undefined;
      if (r.status >= 500) stats.byStatus[r.status] = (stats.byStatus[r.status] ?? 0) + 1;
      if (r.status === 503 && !r.headers.get('retry-after')) stats.noRetryAfter++;
      if (r.status === 502 || r.status === 503 || r.status === 504) {
        await sleep(Math.min(2000, Number(r.headers.get('retry-after') ?? 0.5) * 1000));
        continue;
      }
      // A create cut off by a killed API left its key claimed: retry until the lease lets us take it over.
      if (r.status === 409 && idem && parsed?.code === 'conflict') {
        await sleep(1000);
        continue;
      }
      return { status: r.status, body: parsed };
    } catch {
      stats.networkErrors++;
      await sleep(500);
    }
  }
  throw new Error(`${method} ${p}: no answer after 90 attempts`);
}

/** Follows a task run over SSE, reconnecting with Last-Event-ID until the final event. */
export async function follow(taskId: string, stats: Stats): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  for (let attempt = 0; attempt < 120; attempt++) {
    const last = events.at(-1)?.id;
    try {
      const r = await openStream(`${target.base}/v1/tasks/${taskId}/execute`, {
        method: 'GET',
        key: target.key,
        lastEventId: last,
        timeoutMs: 120_000,
        onEvent: (e) => e.data?.done === true,
      });
      if (r.status >= 500) stats.byStatus[r.status] = (stats.byStatus[r.status] ?? 0) + 1;
      events.push(...r.events);
    } catch {
      stats.networkErrors++;
    }
    if (events.at(-1)?.data?.done) return events;
    await sleep(500);
  }
  throw new Error(`task ${taskId}: no final event`);
}

/** Polls a job's GET until its status is one of `final` (bounded: 300 polls). */
export async function settle(p: string, final: string[], stats: Stats): Promise<any> {
  for (let i = 0; i < 300; i++) {
    const g = await call('GET', p, undefined, stats);
    if (final.includes(g.body?.status)) return g.body;
    await sleep(300);
  }
  throw new Error(`${p} did not settle`);
}

/**
 * Probes `url` every 100 ms while `during` runs and until one probe answers 200 after it: what a client
 * saw during an outage. Bounded by `maxProbes`.
 */
export async function probeDuring(
  url: string,
  key: string,
  during: () => Promise<void>,
  maxProbes = 600,
): Promise<{ status: number; retryAfter: string | null }[]> {
  const seen: { status: number; retryAfter: string | null }[] = [];
  let done = false;
  const fault = during().finally(() => (done = true));
  for (let i = 0; i < maxProbes; i++) {
    const r = await fetch(url, { headers: { authorization: `Bearer ${key}` } }).then(
      async (res) => ({ status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.text() }),
      () => null,
    );
    if (r) seen.push({ status: r.status, retryAfter: r.retryAfter });
    if (done && r?.status === 200) break;
    await sleep(100);
  }
  await fault;
  return seen;
}

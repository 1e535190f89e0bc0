/**
 * Browser benchmark, same run, interleaved:
 *  - API: POST /v1/browser/open, /action (fill, click), GET /v1/browser/snapshot (auth, validation,
 *    tenant lookup, the command sent to the owning worker's command endpoint (or, when that cannot
 *    take it, a Temporal update on the session workflow), the guard proxy, checkpoint to PostgreSQL);
 *  - raw: the same Playwright calls on a page of a bare Chromium context of this process.
 * Each group of four commands is followed by a pause (SETTLE_MS), so the API's deferred work (the
 * checkpoint 250 ms after the last command, the signal to the workflow) runs between groups and
 * lands in neither side's timings: before, it ran during the raw group that followed and slowed the
 * baseline.
 * Goals: snapshot p50 ≤ 1.5× raw; ≤ 30 ms added p50 per command; 1,000-element page snapshot p50
 * ≤ 400 ms through the API; the default snapshot of that page ≤ 8k tokens with `truncated` set.
 * Also prints memory (PSS) per open session. Run: npm run -s bench -- browser   (ROUNDS=12 by default)
 */
import { readdirSync, readFileSync } from 'node:fs';
import pino from 'pino';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS } from '../activities/browser/host';
import type { Client } from '@temporalio/client';
import { browserWorkflowId } from '../api/browser-client';
import { startPageServer } from '../test/browser/pages';
import { startBrowserWorkers } from '../workers/browser-worker';
import { fmt, percentile, startBenchStack } from './helpers';

const ROUNDS = Number(process.env.ROUNDS ?? 12);
const SETTLE_MS = 600;
const settle = () => new Promise((r) => setTimeout(r, SETTLE_MS));

/** PSS (kB) of every process descending from this one: Chromium's browser, renderers, GPU and utility processes. */
function descendantsPssKb(): number {
  const parent = new Map<number, number>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      parent.set(Number(d), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      /* gone */
    }
  }
  const mine = (pid: number): boolean => {
    for (let p = parent.get(pid), n = 0; p !== undefined && n < 20; p = parent.get(p), n++)
      if (p === process.pid) return true;
    return false;
  };
  let kb = 0;
  for (const pid of parent.keys()) {
    if (!mine(pid)) continue;
    try {
      kb += Number(/Pss:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0);
    } catch {
      /* gone */
    }
  }
  return kb;
}

type HistoryEvent = { eventTime?: { seconds?: unknown; nanos?: number | null } | null } & Record<string, unknown>;
const at = (e: HistoryEvent): number => Number(e.eventTime?.seconds ?? 0) * 1000 + (e.eventTime?.nanos ?? 0) / 1e6;

/**
 * Where an API command's time goes, from the session workflow's history (server clock): per command update,
 * update accepted → activity scheduled (the workflow task that runs the handler), scheduled → started (dispatch
 * to the owning worker), started → completed (the command itself), completed → update completed (the workflow
 * task that returns the result). What is left of the client-side time is HTTP, auth and the update's own round trip.
 */
async function stageBreakdown(client: Client, sessionId: string): Promise<Array<{ line: string; count: number }>> {
  const events = ((await client.workflow.getHandle(browserWorkflowId(sessionId)).fetchHistory()).events ??
    []) as unknown as HistoryEvent[];
  const byKind = new Map<string, { handler: number[]; dispatch: number[]; command: number[]; result: number[] }>();
  let accepted: number | undefined;
  let scheduled: number | undefined;
  let started: number | undefined;
  let completed: number | undefined;
  let kind = '';
  for (const e of events) {
    const sched = e.activityTaskScheduledEventAttributes as
      { input?: { payloads?: Array<{ data?: Uint8Array }> } } | undefined;
    if (e.workflowExecutionUpdateAcceptedEventAttributes) accepted = at(e);
    else if (sched && accepted !== undefined) {
      scheduled = at(e);
      try {
        const cmd = (
          JSON.parse(Buffer.from(sched.input?.payloads?.[0]?.data ?? []).toString()) as {
            cmd?: { op?: string; action?: string };
          }
        ).cmd;
        kind = cmd?.action ?? cmd?.op ?? '?';
      } catch {
        kind = '?';
      }
    } else if (e.activityTaskStartedEventAttributes && scheduled !== undefined) started = at(e);
    else if (e.activityTaskCompletedEventAttributes && started !== undefined) completed = at(e);
    else if (
      e.workflowExecutionUpdateCompletedEventAttributes &&
      accepted !== undefined &&
      scheduled !== undefined &&
      started !== undefined &&
      completed !== undefined
    ) {
      const k = byKind.get(kind) ?? { handler: [], dispatch: [], command: [], result: [] };
      byKind.set(kind, k);
      k.handler.push(scheduled - accepted);
      k.dispatch.push(started - scheduled);
      k.command.push(completed - started);
      k.result.push(at(e) - completed);
      accepted = scheduled = started = completed = undefined;
    }
  }
  const p50 = (v: number[]) => fmt(percentile(v, 50));
  // Only the commands of the measured loop (open, snapshot, actions); the session's own close is not one.
  return [...byKind]
    .filter(([k]) => k !== '?' && k !== 'close')
    .map(([k, v]) => ({
      count: v.command.length,
      line: `    ${k.padEnd(9)} handler ${p50(v.handler)}  dispatch ${p50(v.dispatch)}  command ${p50(v.command)}  result ${p50(v.result)} ms p50  (${v.command.length})`,
    }));
}

async function main(): Promise<void> {
  const pages = await startPageServer();
  const stack = await startBenchStack({
    workflowsPath: require.resolve('../workflows'),
    env: { SVC_ALLOW_PRIVATE_FETCH: 'true' },
    peers: [pages],
  });
  const { app } = stack;
  const bw = await startBrowserWorkers({
    config: app.config,
    db: app.db,
    log: pino({ level: 'warn' }),
    address: app.config.temporal.address!,
    taskQueue: stack.taskQueue,
  });
  const raw = await chromium.launch({ executablePath: app.config.browser.chromiumPath, args: CHROMIUM_ARGS });
  let failed = false;
  try {
    const key = await app.key(['runtime:workspaces']);
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(app.url + path, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const json = (await res.json()) as Record<string, any>;
      if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
      return json;
    };
    const id = (await call('POST', '/v1/browser/sessions', {})).id as string;
    const page = await (await raw.newContext()).newPage();
    const refOf = (text: string, re: RegExp) =>
      /\[ref=([a-z0-9]+)\]/.exec(text.split('\n').find((l) => re.test(l)) ?? '')![1];

    const api = { open: [] as number[], fill: [] as number[], click: [] as number[], snapshot: [] as number[] };
    const base = { open: [] as number[], fill: [] as number[], click: [] as number[], snapshot: [] as number[] };
    const time = async (into: number[], fn: () => Promise<unknown>) => {
      const t = performance.now();
      await fn();
      into.push(performance.now() - t);
    };
    let sent = 0;
    for (let i = 0; i < ROUNDS + 2; i++) {
      const a = i < 2 ? { open: [], fill: [], click: [], snapshot: [] } : api; // two warm-up rounds
      const b = i < 2 ? { open: [], fill: [], click: [], snapshot: [] } : base;
      await time(a.open, () => call('POST', '/v1/browser/open', { session_id: id, url: `${pages.url}/form` }));
      let snap = '';
      await time(a.snapshot, async () => (snap = (await call('GET', `/v1/browser/snapshot?session_id=${id}`)).text));
      await time(a.fill, () =>
        call('POST', '/v1/browser/action', {
          session_id: id,
          action: 'fill',
          ref: refOf(snap, /textbox "Name"/),
          text: 'Ada',
        }),
      );
      await time(a.click, () =>
        call('POST', '/v1/browser/action', { session_id: id, action: 'click', ref: refOf(snap, /button "Press me"/) }),
      );
      sent += 4;
      await settle();

      await time(b.open, () => page.goto(`${pages.url}/form`));
      let rawSnap = '';
      await time(b.snapshot, async () => (rawSnap = await page.ariaSnapshot({ mode: 'ai' })));
      await time(b.fill, () => page.locator(`aria-ref=${refOf(rawSnap, /textbox "Name"/)}`).fill('Ada'));
      await time(b.click, () => page.locator(`aria-ref=${refOf(rawSnap, /button "Press me"/)}`).click());
      await settle();
    }
    console.log(`browser benchmark: ${ROUNDS} rounds, API vs raw Playwright on the same loopback page, interleaved`);
    for (const k of ['open', 'fill', 'click', 'snapshot'] as const) {
      const pa = percentile(api[k], 50);
      const pb = percentile(base[k], 50);
      const added = pa - pb;
      const ok = added <= 30 && (k !== 'snapshot' || pa / pb <= 1.5);
      failed ||= !ok;
      console.log(
        `  ${k.padEnd(8)} api p50 ${fmt(pa)} ms  raw p50 ${fmt(pb)} ms  ratio ${(pa / pb).toFixed(2)}×  added ${fmt(added)} ms  ${ok ? 'PASS' : 'FAIL'}`,
      );
    }

    const viaWorkflow = await stageBreakdown(stack.client, id);
    const updates = viaWorkflow.reduce((n, l) => n + l.count, 0);
    console.log(
      `  ${sent - updates} of ${sent} commands went straight to the owning worker, ${updates} through the session workflow`,
    );
    if (updates) {
      console.log("  where a workflow command's time goes (workflow history, server clock):");
      for (const l of viaWorkflow) console.log(l.line);
    }

    await call('POST', '/v1/browser/open', { session_id: id, url: `${pages.url}/big?n=1000` });
    await page.goto(`${pages.url}/big?n=1000`);
    const big: number[] = [];
    const bigRaw: number[] = [];
    let dflt: Record<string, any> = {};
    // Interleaved with the same snapshot in raw Playwright (context for the absolute goal: the machine's load moves both).
    for (let i = 0; i < Math.max(5, ROUNDS / 2); i++) {
      await time(big, async () => (dflt = await call('GET', `/v1/browser/snapshot?session_id=${id}`)));
      await time(bigRaw, () => page.ariaSnapshot({ mode: 'ai' }));
    }
    const full = await call('GET', `/v1/browser/snapshot?session_id=${id}&max_chars=1000000`);
    const bigOk = percentile(big, 50) <= 400;
    const cutOk = dflt.token_estimate <= 8000 && dflt.truncated === true;
    failed ||= !bigOk || !cutOk;
    console.log(
      `  1,000-element page snapshot p50 ${fmt(percentile(big, 50))} ms (raw Playwright ${fmt(percentile(bigRaw, 50))} ms; full text ${full.chars} chars)  ${bigOk ? 'PASS' : 'FAIL'}`,
    );
    console.log(
      `  default snapshot of it: ${dflt.token_estimate} tokens, ${dflt.text.length} chars, truncated ${dflt.truncated}  ${cutOk ? 'PASS' : 'FAIL'}`,
    );

    const before = descendantsPssKb();
    const extra: string[] = [];
    for (let i = 0; i < 3; i++) {
      const s = (await call('POST', '/v1/browser/sessions', {})).id as string;
      await call('POST', '/v1/browser/open', { session_id: s, url: `${pages.url}/form` });
      extra.push(s);
    }
    const after = descendantsPssKb();
    console.log(
      `  memory: ${((after - before) / 3 / 1024).toFixed(1)} MiB PSS per open session (3 sessions on /form, Chromium processes)`,
    );
    for (const s of extra) await call('DELETE', `/v1/browser/sessions/${s}`);
    await call('DELETE', `/v1/browser/sessions/${id}`);
  } finally {
    await raw.close();
    await bw?.stop();
    await stack.close();
    await pages.close();
  }
  console.log(failed ? 'FAIL' : 'PASS');
  if (failed) process.exitCode = 1;
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});

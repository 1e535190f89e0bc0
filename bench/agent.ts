/**
 * Agent turn overhead, same run, interleaved:
 *  - agent: POST /v1/capabilities/agent, then its SSE events read to `done`. The fake model (a real
 *    local OpenAI-compatible server, MODEL_MS per answer) asks for one calculator call per turn for
 *    TURNS-1 turns, then answers: every turn is a model activity plus a tool activity, outputs
 *    stored in PostgreSQL, events through LISTEN/NOTIFY;
 *  - raw: the same conversation called directly: TURNS sequential POSTs to the fake upstream, and the
 *    calculator run in process between them (the floor: the model call alone).
 * Prints p50 of both, the ratio agent/raw, the overhead per turn, and PASS/FAIL against the goals;
 * exits non-zero on FAIL.
 * Run: npm run -s bench -- agent   (ROUNDS=8, TURNS=4, MODEL_MS=100 by default)
 */
import path from 'node:path';
import { runCommonsTool } from '../activities/commons';
import { startFakeOpenAI, type RecordedRequest } from '../test/helpers/fake-openai';
import { fmt, percentile, startBenchStack } from './helpers';

const ROUNDS = Number(process.env.ROUNDS ?? 8);
const TURNS = Number(process.env.TURNS ?? 4);
const MODEL_MS = Number(process.env.MODEL_MS ?? 100);
/** Goals: agent p50 ≤ 1.5 × raw p50 and ≤ 100 ms of our own work per turn (two activities + storage). */
const GOALS = { ratio: 1.5, perTurnMs: 100 };

const toolCount = (r: RecordedRequest) =>
  (r.body?.messages ?? []).filter((m: { role: string }) => m.role === 'tool').length;

async function viaAgent(url: string, key: string, n: number): Promise<number> {
  const t0 = performance.now();
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const run = (await (
    await fetch(`${url}/v1/capabilities/agent`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ query: `bench ${n}: add numbers`, max_steps: TURNS + 1 }),
    })
  ).json()) as { id: string };
  const res = await fetch(`${url}/v1/capabilities/agent/${run.id}/events`, {
    headers: { ...headers, accept: 'text/event-stream' },
  });
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error('stream ended before done');
    buf += dec.decode(value, { stream: true });
    if (buf.includes('event: done')) break;
  }
  const ms = performance.now() - t0;
  await reader.cancel();
  return ms;
}

async function viaRaw(modelUrl: string): Promise<number> {
  const t0 = performance.now();
  const messages: unknown[] = [{ role: 'user', content: 'bench raw: add numbers' }];
  for (let turn = 0; turn < TURNS; turn++) {
    const r = (await (
      await fetch(`${modelUrl}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages }),
      })
    ).json()) as {
      choices: Array<{ message: { tool_calls?: Array<{ id: string; function: { arguments: string } }> } }>;
    };
    const msg = r.choices[0].message;
    messages.push(msg);
    for (const c of msg.tool_calls ?? [])
      messages.push({
        role: 'tool',
        tool_call_id: c.id,
        content: runCommonsTool('calculator', c.function.arguments).content,
      });
  }
  return performance.now() - t0;
}

async function main(): Promise<void> {
  const model = await startFakeOpenAI({ defaults: { delayMs: MODEL_MS } });
  model.onRequest((req) =>
    toolCount(req) < TURNS - 1
      ? { delayMs: MODEL_MS, toolCalls: [{ name: 'calculator', arguments: { expression: `${toolCount(req)} + 1` } }] }
      : { delayMs: MODEL_MS, reply: 'done' },
  );
  const stack = await startBenchStack({
    workflowsPath: path.join(__dirname, '../workflows'),
    env: { OPENAI_BASE_URL: model.url },
    peers: [model],
  });
  try {
    const key = await stack.app.key(['runtime:chat']);
    await viaAgent(stack.app.url, key, -1); // warm-up: bundle caches, first connections
    await viaRaw(model.url);
    const agent: number[] = [];
    const raw: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      agent.push(await viaAgent(stack.app.url, key, i));
      raw.push(await viaRaw(model.url));
    }
    const a = percentile(agent, 50);
    const r = percentile(raw, 50);
    const ratio = a / r;
    const perTurn = (a - r) / TURNS;
    console.log(`agent run, ${TURNS} turns (${TURNS - 1} tool calls), model ${MODEL_MS} ms/answer, ${ROUNDS} rounds`);
    console.log(`  agent p50 ${fmt(a)} ms  p90 ${fmt(percentile(agent, 90))} ms`);
    console.log(`  raw   p50 ${fmt(r)} ms  p90 ${fmt(percentile(raw, 90))} ms`);
    const okRatio = ratio <= GOALS.ratio;
    const okTurn = perTurn <= GOALS.perTurnMs;
    console.log(`  ratio agent/raw ${ratio.toFixed(2)}× (goal ≤ ${GOALS.ratio}×) ${okRatio ? 'PASS' : 'FAIL'}`);
    console.log(`  overhead per turn ${fmt(perTurn)} ms (goal ≤ ${GOALS.perTurnMs} ms) ${okTurn ? 'PASS' : 'FAIL'}`);
    if (!okRatio || !okTurn) process.exitCode = 1;
  } finally {
    await stack.close();
    await model.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});

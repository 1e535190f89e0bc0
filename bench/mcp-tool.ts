/**
 * The Responses API's remote `mcp` tool: one response that lists a server's tools, makes one call (require_approval
 * never) and answers, against a client doing the same work itself with the MCP SDK's client and the model upstream
 * directly (connect, list, ask the model, call the tool, ask again). Same process, same MCP server, same fake model;
 * the two paths alternate. Goal: the API's p50 ≤ 1.5× the direct path's (sequential, then 10 clients at once).
 * Run: npm run -s bench -- mcp-tool   (needs PostgreSQL on 127.0.0.1:5432; no Temporal: the response is answered in
 * its request)
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startFakeOpenAI, type RecordedRequest } from '../test/helpers/fake-openai';
import { startMcpPeer } from '../test/helpers/mcp-peer';
import { fmt, percentile, startBenchApp } from './helpers';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 200);
const CONCURRENCY = 10;
const GOAL = 1.5;

/** The model asks for the tool until a tool's answer is in the conversation, then answers. */
const answered = (req: RecordedRequest) => (req.body?.messages ?? []).some((m: { role?: string }) => m.role === 'tool');

async function main(): Promise<void> {
  const model = await startFakeOpenAI();
  model.onRequest((req) =>
    answered(req)
      ? { reply: 'Two and three make 5.' }
      : { toolCalls: [{ name: 'calc__add', arguments: { a: 2, b: 3 } }] },
  );
  const peer = await startMcpPeer();
  const app = await startBenchApp({ OPENAI_BASE_URL: model.url, SVC_ALLOW_PRIVATE_FETCH: '127.0.0.1' });
  try {
    const key = await app.key(['runtime:chat']);
    const body = JSON.stringify({
      input: 'What is 2 + 3?',
      tools: [{ type: 'mcp', server_label: 'calc', server_url: peer.url, require_approval: 'never' }],
    });
    const viaApi = async () => {
      const res = await fetch(`${app.url}/v1/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body,
      });
      const j = (await res.json()) as { output?: Array<{ type: string; output?: string }> };
      if (res.status !== 200 || j.output?.[1]?.output !== '5')
        throw new Error(`api: ${res.status} ${JSON.stringify(j)}`);
    };
    const chat = async (messages: unknown[], tools?: unknown[]) => {
      const res = await fetch(`${model.url}/chat/completions`, {
        method: 'POST',
        headers: { authorization: 'Bearer x', 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', messages, ...(tools ? { tools } : {}) }),
      });
      return (await res.json()) as {
        choices: Array<{
          message: { content: string | null; tool_calls?: Array<{ id: string; function: { arguments: string } }> };
        }>;
      };
    };
    const direct = async () => {
      const client = new Client({ name: 'bench', version: '1' });
      await client.connect(new StreamableHTTPClientTransport(new URL(peer.url)));
      try {
        const { tools } = await client.listTools();
        const functions = tools.map((t) => ({
          type: 'function',
          function: {
            name: `calc__${t.name.replace(/\W/g, '_')}`,
            description: t.description,
            parameters: t.inputSchema,
          },
        }));
        const messages: unknown[] = [{ role: 'user', content: 'What is 2 + 3?' }];
        const first = await chat(messages, functions);
        const call = first.choices[0].message.tool_calls![0];
        const out = await client.callTool({ name: 'add', arguments: JSON.parse(call.function.arguments) });
        const text = (out.content as Array<{ text: string }>)[0].text;
        messages.push(first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: text });
        const second = await chat(messages, functions);
        if (text !== '5' || !second.choices[0].message.content) throw new Error('direct: wrong answer');
      } finally {
        await client.close();
      }
    };
    for (let i = 0; i < 20; i++) await Promise.all([viaApi(), direct()]); // warm-up: connections, JIT, lazy modules

    const run = async (concurrency: number) => {
      const api: number[] = [];
      const raw: number[] = [];
      const timed = async (f: () => Promise<void>, into: number[]) => {
        const t0 = performance.now();
        await f();
        into.push(performance.now() - t0);
      };
      for (let done = 0; done < ROUNDS; done += concurrency) {
        // Alternate which path goes first; the paths never overlap each other.
        const order: Array<[() => Promise<void>, number[]]> =
          (done / concurrency) % 2
            ? [
                [direct, raw],
                [viaApi, api],
              ]
            : [
                [viaApi, api],
                [direct, raw],
              ];
        for (const [f, into] of order) await Promise.all(Array.from({ length: concurrency }, () => timed(f, into)));
      }
      return {
        api: percentile(api, 50),
        raw: percentile(raw, 50),
        apiP99: percentile(api, 99),
        rawP99: percentile(raw, 99),
      };
    };
    let failed = false;
    for (const concurrency of [1, CONCURRENCY]) {
      const r = await run(concurrency);
      const ratio = r.api / r.raw;
      const pass = ratio <= GOAL;
      failed ||= !pass;
      console.log(
        `${pass ? 'PASS' : 'FAIL'}  mcp tool, ${concurrency} at a time (${ROUNDS} each): direct p50 ${fmt(r.raw)} ms p99 ${fmt(r.rawP99)} ms | API p50 ${fmt(r.api)} ms p99 ${fmt(r.apiP99)} ms | ratio ${ratio.toFixed(2)}x (goal <= ${GOAL}x; +${fmt(r.api - r.raw)} ms)`,
      );
    }
    if (failed) process.exitCode = 1;
  } finally {
    await app.close();
    await peer.close();
    await model.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});

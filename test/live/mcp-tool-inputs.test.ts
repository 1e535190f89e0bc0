import { SCOPES } from '../../schema/auth';
import { startHarness, type Harness } from '../helpers/harness';
import { jsonSites, withValueAt, type Json } from '../helpers/json-sites';
import { rawRequest } from './mcp-helpers';

/**
 * Every tool a key with every scope may call over MCP, with arguments built from its published input
 * schema: as built, empty, and with NUL or a lone surrogate in each string in turn. MCP reads its own
 * body, so the HTTP edge's check never sees tool arguments: each call must answer as a tool result
 * (success or an error a caller can act on), never "The tool failed." (an exception the tool did not
 * expect) or a JSON-RPC error.
 */

jest.setTimeout(120_000);

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ worker: true });
});
afterAll(async () => h?.close());

type Schema = Record<string, any>;

/** Stands for arrays nested 10,000 deep, spliced into the request text (JSON.parse takes them; JSON.stringify does not). */
const DEEP = '\u0001deep';
const DEEP_TEXT = '['.repeat(10_000) + ']'.repeat(10_000);

/** The smallest value the schema describes (first choice of a union or enum, required properties only). */
function sample(s: Schema | undefined, defs: Record<string, Schema>): Json {
  if (!s) return 'x';
  if (s.$ref) return sample(defs[String(s.$ref).split('/').pop()!], defs);
  if (s.const !== undefined) return s.const;
  if (s.enum) return s.enum[0];
  if (s.default !== undefined) return s.default;
  if (s.anyOf ?? s.oneOf) return sample((s.anyOf ?? s.oneOf)[0], defs);
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  if (type === 'string') return s.format === 'uri' ? 'http://127.0.0.1:9/x' : 'hello world';
  if (type === 'integer' || type === 'number') return s.minimum ?? 1;
  if (type === 'boolean') return true;
  if (type === 'array') return [sample(s.items, defs)];
  const out: Record<string, Json> = {};
  for (const k of s.required ?? []) out[k] = sample(s.properties?.[k], defs);
  return out;
}

test('no tool fails unexpectedly on arguments built from its schema, or with NUL or a lone surrogate in any string', async () => {
  const key = (await h.key([...SCOPES])).apiKey;
  let id = 0;
  const rpc = (method: string, params: unknown) =>
    rawRequest(`${h.url}/v1/mcp`, {
      headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }).replace(JSON.stringify(DEEP), DEEP_TEXT),
    });
  const tools = (await rpc('tools/list', {})).json.result.tools as Array<{ name: string; inputSchema: Schema }>;
  const problems: string[] = [];
  let refusedBadText = 0;
  for (const t of tools) {
    // Browser tools open a session on a browser worker, which this harness does not run.
    if (t.name.startsWith('browser_')) continue;
    const args = sample(t.inputSchema, t.inputSchema.$defs ?? {});
    const variants: Array<[string, Json, boolean]> = [
      ['built', args, false],
      ['empty', {}, false],
    ];
    for (const p of jsonSites(args).strings) {
      for (const [what, text] of [
        ['NUL', 'a\u0000b'],
        ['lone surrogate', 'a\ud800b'],
      ])
        variants.push([`${what} at ${p.join('.')}`, withValueAt(args, [p], text), true]);
      variants.push([`nested 10,000 deep at ${p.join('.')}`, withValueAt(args, [p], DEEP), true]);
    }
    for (const [label, a, bad] of variants) {
      const r = await rpc('tools/call', { name: t.name, arguments: a });
      const text: string = r.json?.result?.content?.[0]?.text ?? '';
      if (r.status !== 200 || r.json?.error) problems.push(`${t.name}, ${label}: ${r.status} ${r.text.slice(0, 160)}`);
      else if (/^The tool (failed|produced an invalid result)/.test(text))
        problems.push(`${t.name}, ${label}: ${text}`);
      else if (bad && r.json.result.isError && /^Invalid arguments: .*(NUL|surrogate)/.test(text)) refusedBadText++;
    }
  }
  expect(problems).toEqual([]);
  // The sweep reached the tools, and tools that store text refused what PostgreSQL cannot store.
  expect(tools.length).toBeGreaterThan(40);
  expect(refusedBadText).toBeGreaterThan(50);
});

import { z } from 'zod';
import type { AgentRunState, AgentUsage } from '../../schema/agents';
import type { AgentOutputRow, AgentRunRow } from './store';

// What a run's stored outputs hold, and how the poll answer is derived from them. Steps, usage and
// sources are computed from job_outputs (written once per step key), so a retried activity can never
// count a turn twice.

export const ModelTurnOut = z.object({
  content: z.string().nullable(),
  tool_calls: z.array(z.object({ id: z.string(), name: z.string(), arguments: z.string() })),
  finish_reason: z.string(),
});
export type ModelTurnOut = z.infer<typeof ModelTurnOut>;

export const ToolCallOut = z.object({
  name: z.string(),
  call_id: z.string(),
  ok: z.boolean(),
  result: z.unknown().optional(),
  error: z.string().optional(),
});
export type ToolCallOut = z.infer<typeof ToolCallOut>;

export const modelKey = (step: number) => `s${String(step).padStart(2, '0')}-model`;
export const toolKey = (step: number, callId: string) => `s${String(step).padStart(2, '0')}-tool-${callId}`;

export function parseOut<T>(schema: z.ZodType<T>, content: string): T | undefined {
  try {
    const r = schema.safeParse(JSON.parse(content));
    return r.success ? r.data : undefined;
  } catch {
    return undefined;
  }
}

/** `url` values (http/https) anywhere in a tool result, in order of appearance. */
function urlsIn(v: unknown, out: string[], depth = 0): void {
  if (depth > 6 || out.length >= 50) return;
  if (Array.isArray(v)) for (const x of v) urlsIn(x, out, depth + 1);
  else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      if ((k === 'url' || k === 'final_url') && typeof x === 'string' && /^https?:\/\//.test(x)) out.push(x);
      else urlsIn(x, out, depth + 1);
    }
  }
}

const UsageCol = z.object({ prompt_tokens: z.number(), completion_tokens: z.number() }).partial();

export function usageOf(outputs: readonly AgentOutputRow[]): AgentUsage {
  const u: AgentUsage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, model_turns: 0, tool_calls: 0 };
  for (const o of outputs) {
    if (o.step_key.endsWith('-model')) {
      u.model_turns++;
      const p = UsageCol.safeParse(o.usage);
      if (p.success) {
        u.prompt_tokens += p.data.prompt_tokens ?? 0;
        u.completion_tokens += p.data.completion_tokens ?? 0;
      }
    } else u.tool_calls++;
  }
  u.total_tokens = u.prompt_tokens + u.completion_tokens;
  return u;
}

export function sourcesOf(outputs: readonly AgentOutputRow[]): string[] {
  const urls: string[] = [];
  for (const o of outputs) {
    if (o.step_key.endsWith('-model')) continue;
    const t = parseOut(ToolCallOut, o.content);
    if (t?.ok) urlsIn(t.result, urls);
  }
  return [...new Set(urls)];
}

function stepOf(o: AgentOutputRow): AgentRunState['steps'][number] {
  if (o.step_key.endsWith('-model')) {
    const m = parseOut(ModelTurnOut, o.content);
    const text = m?.tool_calls.length
      ? `tool calls: ${m.tool_calls.map((c) => c.name).join(', ')}`
      : (m?.content ?? '');
    return { key: o.step_key, kind: 'model', name: o.lane, output_id: o.id, ok: true, summary: text.slice(0, 200) };
  }
  const t = parseOut(ToolCallOut, o.content);
  const text = t?.ok ? JSON.stringify(t.result ?? null) : (t?.error ?? '');
  return {
    key: o.step_key,
    kind: 'tool',
    name: t?.name ?? 'unknown',
    output_id: o.id,
    ok: t?.ok ?? false,
    summary: text.slice(0, 200),
  };
}

/** The poll answer: the row plus what its outputs say. */
export function agentRunView(r: AgentRunRow, outputs: readonly AgentOutputRow[]): AgentRunState {
  return {
    id: r.id,
    kind: r.kind,
    status: r.status,
    stop_reason: r.stop_reason,
    query: r.query,
    agent_id: r.agent_id,
    tier: r.tier,
    answer: r.answer,
    steps: outputs.map(stepOf),
    sources: sourcesOf(outputs),
    usage: usageOf(outputs),
    is_delegated: r.is_delegated,
    pr_link: r.pr_link,
    error: r.error,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

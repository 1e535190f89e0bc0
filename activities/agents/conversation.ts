import type { ChatMessageIn } from '../providers/types';
import { ModelTurnOut, ToolCallOut, parseOut, toolKey } from './outputs';
import type { AgentRunRow } from './store';

const DEFAULT_INSTRUCTIONS =
  'You are a careful agent. Call the tools when they help, several at once when they are independent. When you are done, reply with the final answer as plain text.';

/** The OpenAI messages of a run so far: system, task, then each turn's assistant message and its tool results. */
export function conversation(
  row: AgentRunRow,
  outputs: ReadonlyArray<{ step_key: string; content: string }>,
): ChatMessageIn[] {
  const ctx = row.context == null ? '' : typeof row.context === 'string' ? row.context : JSON.stringify(row.context);
  const ws = row.workspace ? ' You work inside a scratch folder: file paths are relative to it.' : '';
  const msgs: ChatMessageIn[] = [
    { role: 'system', content: (row.instructions ?? DEFAULT_INSTRUCTIONS) + ws },
    { role: 'user', content: ctx ? `${row.query}\n\nContext:\n${ctx}` : row.query },
  ];
  const byKey = new Map(outputs.map((x) => [x.step_key, x.content]));
  for (const o of outputs) {
    if (!o.step_key.endsWith('-model')) continue;
    const m = parseOut(ModelTurnOut, o.content);
    if (!m) continue;
    const step = Number(o.step_key.slice(1, 3));
    msgs.push({
      role: 'assistant',
      content: m.content,
      ...(m.tool_calls.length
        ? {
            tool_calls: m.tool_calls.map((c) => ({
              id: c.id,
              type: 'function' as const,
              function: { name: c.name, arguments: c.arguments },
            })),
          }
        : {}),
    });
    for (const c of m.tool_calls) {
      const t = parseOut(ToolCallOut, byKey.get(toolKey(step, c.id)) ?? '');
      const content = !t ? 'No result.' : t.ok ? JSON.stringify(t.result).slice(0, 20_000) : `Error: ${t.error}`;
      msgs.push({ role: 'tool', tool_call_id: c.id, content });
    }
  }
  return msgs;
}

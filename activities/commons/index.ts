import { z } from 'zod';
import { calculator } from './calculator';
import { datetime } from './datetime';
import { diffTool } from './diff-tool';
import { jsonTool } from './json-tool';
import { markdownTool } from './markdown-tool';
import { regexTool } from './regex-tool';
import { textTool } from './text-tool';
import { tokenEstimate } from './token-estimate';
import type { CommonsTool } from './types';

/** The commons toolbox: bounded utilities only (no browsing, files, shell, memory or outside writes). */
export const COMMONS_TOOLS: readonly CommonsTool[] = [
  calculator,
  datetime,
  jsonTool,
  regexTool,
  diffTool,
  tokenEstimate,
  textTool,
  markdownTool,
];

/** Spec limit: the model may request at most this many tool calls per request. */
export const MAX_TOOL_CALLS = 2;
const MAX_RESULT_CHARS = 8000;

function parameters(tool: CommonsTool): Record<string, unknown> {
  const schema = z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  delete schema.$schema;
  return schema;
}

export function commonsToolList(): Array<{ name: string; description: string; parameters: Record<string, unknown> }> {
  return COMMONS_TOOLS.map((t) => ({ name: t.name, description: t.description, parameters: parameters(t) }));
}

/** The toolbox in the OpenAI `tools` format. */
export function commonsOpenAiTools(): Array<{
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}> {
  return commonsToolList().map((t) => ({ type: 'function', function: t }));
}

/** Runs one tool call; never throws: failures come back as `{ ok: false }` with an error the model can read. */
export function runCommonsTool(name: string, rawArgs: string): { ok: boolean; content: string } {
  const tool = COMMONS_TOOLS.find((t) => t.name === name);
  const fail = (error: string) => ({ ok: false, content: JSON.stringify({ error }) });
  if (!tool) return fail(`unknown tool '${name}'; available: ${COMMONS_TOOLS.map((t) => t.name).join(', ')}`);
  let args: unknown;
  try {
    args = rawArgs.trim() === '' ? {} : JSON.parse(rawArgs);
  } catch {
    return fail('arguments are not valid JSON');
  }
  const parsed = tool.input.safeParse(args);
  if (!parsed.success)
    return fail(parsed.error.issues.map((i) => `${i.path.join('.') || 'arguments'}: ${i.message}`).join('; '));
  try {
    const text = JSON.stringify(tool.run(parsed.data)) ?? 'null';
    return {
      ok: true,
      content: text.length > MAX_RESULT_CHARS ? `${text.slice(0, MAX_RESULT_CHARS)}…(truncated)` : text,
    };
  } catch (err) {
    return fail((err as Error).message.slice(0, 500));
  }
}

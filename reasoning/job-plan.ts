/**
 * Pure helpers for model-planned jobs: the planning prompt and a robust parser of the model's
 * answer into steps. Deterministic; safe inside workflows and activities alike.
 */
import { parseStorableJson } from '../schema/storable';

export interface PlannedStep {
  title: string;
  prompt: string;
}

export const MAX_PLANNED_STEPS = 8;

export function planningPrompt(title: string, description: string | null): string {
  return [
    `Plan the goal "${title}" as 2 to ${MAX_PLANNED_STEPS} concrete steps that a language model can carry out one after another.`,
    description ? `Details: ${description}` : '',
    'Answer with JSON only: {"steps":[{"title":"short title","prompt":"what to do in this step"}]}',
  ]
    .filter(Boolean)
    .join('\n');
}

function clean(s: unknown, max: number): string {
  return typeof s === 'string' ? s.replace(/\s+/g, ' ').trim().slice(0, max) : '';
}

/**
 * Reads steps from a model answer: a JSON object or array anywhere in the text, else a
 * numbered/bulleted list, else one step that carries out the goal itself.
 */
export function parsePlan(text: string, title: string, description: string | null): PlannedStep[] {
  const fromJson = ((): PlannedStep[] => {
    const start = text.search(/[[{]/);
    const end = Math.max(text.lastIndexOf('}'), text.lastIndexOf(']'));
    if (start < 0 || end <= start) return [];
    let parsed: unknown;
    try {
      parsed = parseStorableJson(text.slice(start, end + 1));
    } catch {
      return [];
    }
    const list = Array.isArray(parsed) ? parsed : (parsed as { steps?: unknown } | null)?.steps;
    if (!Array.isArray(list)) return [];
    return list
      .map((s): PlannedStep => {
        if (typeof s === 'string') return { title: clean(s, 200), prompt: clean(s, 4000) };
        const o = (s ?? {}) as Partial<PlannedStep>;
        return { title: clean(o.title, 200), prompt: clean(o.prompt ?? o.title, 4000) };
      })
      .filter((s) => s.title && s.prompt);
  })();
  let steps = fromJson;
  if (!steps.length) {
    steps = text
      .split('\n')
      .map((l) => /^\s*(?:\d+[.)]|[-*•])\s+(.+)$/.exec(l)?.[1])
      .filter((l): l is string => Boolean(l))
      .map((l) => ({ title: clean(l.split(/[:.–-]\s/)[0], 200), prompt: clean(l, 4000) }))
      .filter((s) => s.title && s.prompt);
  }
  if (!steps.length)
    steps = [{ title: clean(title, 200), prompt: clean(description ? `${title}: ${description}` : title, 4000) }];
  return steps.slice(0, MAX_PLANNED_STEPS);
}

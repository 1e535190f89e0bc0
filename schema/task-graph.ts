// No zod here: the workflow sandbox imports this file.

/** Error type of permanent step failures: the workflow lists it as non-retryable. */
export const PERMANENT_STEP_ERROR = 'StepPermanentError';

/** `{{steps.<id>.result}}` references inside a step's args. */
export const STEP_REF = /\{\{\s*steps\.([A-Za-z0-9_-]{1,64})\.result\s*\}\}/g;

export function stepRefs(args: Record<string, string>): string[] {
  const out = new Set<string>();
  for (const v of Object.values(args)) for (const m of v.matchAll(STEP_REF)) out.add(m[1]);
  return [...out];
}

/** The part of a step the graph rules look at. */
export interface GraphStep {
  id: string;
  depends_on: readonly string[];
  args?: Readonly<Record<string, string>>;
}

export interface GraphProblem {
  /** Index of the offending step in the list given, or -1 for the graph as a whole. */
  index: number;
  field: 'id' | 'depends_on' | 'args';
  message: string;
}

/**
 * A dependency cycle as a closed path of step ids (`a → b → c → a`), or null for a DAG.
 * Iterative DFS with colours, so deep chains do not blow the stack; deterministic (input order).
 */
export function findCycle(steps: readonly GraphStep[]): string[] | null {
  const byId = new Map(steps.map((s) => [s.id, s]));
  const colour = new Map<string, 0 | 1 | 2>();
  for (const start of steps) {
    if (colour.get(start.id)) continue;
    const path: string[] = [];
    const stack: Array<{ id: string; next: number }> = [{ id: start.id, next: 0 }];
    colour.set(start.id, 1);
    path.push(start.id);
    while (stack.length) {
      const top = stack[stack.length - 1];
      const deps = byId.get(top.id)?.depends_on ?? [];
      if (top.next >= deps.length) {
        colour.set(top.id, 2);
        stack.pop();
        path.pop();
        continue;
      }
      const dep = deps[top.next++];
      if (!byId.has(dep)) continue;
      const c = colour.get(dep) ?? 0;
      if (c === 1) {
        // `path` runs from a dependant to its dependency: print it in "runs before" order.
        const cycle = path.slice(path.indexOf(dep));
        return [...cycle, dep].reverse();
      }
      if (c === 0) {
        colour.set(dep, 1);
        path.push(dep);
        stack.push({ id: dep, next: 0 });
      }
    }
  }
  return null;
}

/**
 * Checks ids, dependencies and `{{steps.<id>.result}}` references of a whole task's steps.
 * Every problem is listed; a cycle is named as `a → b → a`.
 */
export function checkGraph(steps: readonly GraphStep[]): GraphProblem[] {
  const problems: GraphProblem[] = [];
  const seen = new Set<string>();
  steps.forEach((s, index) => {
    if (seen.has(s.id)) problems.push({ index, field: 'id', message: `duplicate step id "${s.id}" in this task` });
    seen.add(s.id);
  });
  steps.forEach((s, index) => {
    for (const dep of s.depends_on) {
      if (dep === s.id)
        problems.push({
          index,
          field: 'depends_on',
          message: `step "${s.id}" depends on itself (cycle ${s.id} → ${s.id})`,
        });
      else if (!seen.has(dep))
        problems.push({ index, field: 'depends_on', message: `"${dep}" is not a step of this task` });
    }
    for (const ref of stepRefs({ ...(s.args ?? {}) })) {
      if (!s.depends_on.includes(ref)) {
        problems.push({ index, field: 'args', message: `{{steps.${ref}.result}} needs "${ref}" in depends_on` });
      }
    }
  });
  if (!problems.some((p) => p.field === 'depends_on' || p.field === 'id')) {
    const cycle = findCycle(steps);
    if (cycle) problems.push({ index: -1, field: 'depends_on', message: `dependency cycle ${cycle.join(' → ')}` });
  }
  return problems;
}

/** Every step that depends, directly or through others, on `id`. */
export function dependantsOf(steps: readonly GraphStep[], id: string): string[] {
  const out = new Set<string>();
  const queue = [id];
  while (queue.length) {
    const cur = queue.shift() as string;
    for (const s of steps) {
      if (!out.has(s.id) && s.depends_on.includes(cur)) {
        out.add(s.id);
        queue.push(s.id);
      }
    }
  }
  return [...out];
}

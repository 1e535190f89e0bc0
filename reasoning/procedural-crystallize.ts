import { defineReasoning } from './types';
import {
  proceduralCrystallizeRequest,
  proceduralCrystallizeResponse,
  type ProceduralCrystallizeRequest,
  type ProceduralCrystallizeResponse,
} from '../schema/reasoning/procedural-crystallize';
import { slug } from './lib/text-segments';

/**
 * Crystallization of repeated action traces: steps are keyed by normalised action + tool;
 * a step enters the procedure when enough traces contain it (support), ordered by its mean
 * relative position; each trace is aligned by the longest increasing subsequence of its
 * positions (order consistency); parameters and targets that vary become variables.
 */
type Res = ProceduralCrystallizeResponse;
const norm = (s: string) => s.toLowerCase().replace(/\s+/g, ' ').trim();
const round = (x: number) => Math.round(x * 1000) / 1000;

interface KeyStat {
  key: string;
  action: string;
  tool: string | null;
  traces: number;
  posSum: number;
  first: number;
}

/** Length of the longest strictly increasing subsequence (patience sorting, O(n log n)). */
function lisLength(a: number[]): number {
  const tails: number[] = [];
  for (const x of a) {
    let lo = 0;
    let hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (tails[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    tails[lo] = x;
  }
  return tails.length;
}

function kindOf(values: string[]): Res['variables'][number]['kind'] {
  const all = (re: RegExp) => values.every((v) => re.test(v));
  if (all(/^-?\d+(?:[.,]\d+)?$/)) return 'number';
  if (all(/^\d{4}-\d{2}-\d{2}/)) return 'date';
  if (all(/^[^@\s]+@[^@\s]+\.[^@\s]+$/)) return 'email';
  if (all(/^https?:\/\//i)) return 'url';
  if (all(/^[A-Za-z]{0,6}[-_#]?\d{2,}$/)) return 'id';
  return 'text';
}

export function compileProceduralCrystallize(input: ProceduralCrystallizeRequest, _ctx: { surface?: string }): Res {
  const p = input.preferences;
  const minSupport = p.min_support ?? 0.5;
  const T = input.traces.length;
  const stats = new Map<string, KeyStat>();
  let order = 0;
  const traceKeys: Map<string, number>[] = []; // per trace: key -> first step index
  for (const tr of input.traces) {
    const firstAt = new Map<string, number>();
    tr.steps.forEach((s, i) => {
      const key = `${norm(s.action)}@${norm(s.tool ?? '')}`;
      if (firstAt.has(key)) return;
      firstAt.set(key, i);
      let st = stats.get(key);
      if (!st)
        stats.set(
          key,
          (st = { key, action: s.action.trim(), tool: s.tool?.trim() || null, traces: 0, posSum: 0, first: order++ }),
        );
      st.traces++;
      st.posSum += tr.steps.length > 1 ? i / (tr.steps.length - 1) : 0;
    });
    traceKeys.push(firstAt);
  }
  const bySupport = (a: KeyStat, b: KeyStat) => b.traces - a.traces || a.first - b.first;
  const chosen = [...stats.values()]
    .filter((s) => s.traces / T >= minSupport)
    .sort(bySupport)
    .slice(0, p.max_steps ?? 20);
  chosen.sort((a, b) => a.posSum / a.traces - b.posSum / b.traces || a.first - b.first);
  const ids = chosen.map((c, k) => `step-${k + 1}-${slug(c.action)}`);
  const keyIdx = new Map(chosen.map((c, k) => [c.key, k]));

  // Variables: values of each (step, parameter) across traces; varying ones become variables.
  const values = new Map<string, { step: number; name: string; set: Set<string>; first: number }>();
  input.traces.forEach((tr, t) => {
    const seen = new Set<string>();
    for (const s of tr.steps) {
      const k = keyIdx.get(`${norm(s.action)}@${norm(s.tool ?? '')}`);
      if (k === undefined || seen.has(`${k}`)) continue;
      seen.add(`${k}`);
      const pairs = [...(s.target !== undefined ? [{ name: 'target', value: s.target }] : []), ...(s.params ?? [])];
      for (const { name, value } of pairs) {
        const vk = `${k}|${name}`;
        let v = values.get(vk);
        if (!v) values.set(vk, (v = { step: k, name, set: new Set(), first: t }));
        if (v.set.size < 50) v.set.add(value);
      }
    }
  });
  const variables: Res['variables'] = [];
  const constants = chosen.map(() => [] as { name: string; value: string }[]);
  const varNames = chosen.map(() => [] as string[]);
  const usedNames = new Set<string>();
  for (const v of [...values.values()].sort(
    (a, b) => a.step - b.step || a.first - b.first || (a.name < b.name ? -1 : 1),
  )) {
    const list = [...v.set];
    if (list.length === 1) {
      constants[v.step].push({ name: v.name, value: list[0] });
      continue;
    }
    if (variables.length >= (p.max_variables ?? 50)) continue;
    let name = slug(v.name).replace(/-/g, '_');
    for (let k = v.step + 1; usedNames.has(name); k++) name = `${slug(v.name).replace(/-/g, '_')}_${k}`;
    usedNames.add(name);
    varNames[v.step].push(name);
    variables.push({
      name,
      step_id: ids[v.step],
      source: v.name,
      kind: kindOf(list),
      distinct_count: v.set.size,
      examples: list.slice(0, 5),
    });
  }

  // Alignment of each trace to the consensus order.
  let sumOrder = 0;
  let successes = 0;
  let withOutcome = 0;
  const alignment: Res['trace_alignment'] = [];
  input.traces.forEach((tr, t) => {
    const pos: number[] = [];
    const matched: string[] = [];
    chosen.forEach((c, k) => {
      const at = traceKeys[t].get(c.key);
      if (at !== undefined) {
        pos.push(at);
        matched.push(ids[k]);
      }
    });
    const coverage = chosen.length ? pos.length / chosen.length : 0;
    const consistency = pos.length ? lisLength(pos) / pos.length : 0;
    sumOrder += consistency;
    if (tr.outcome) {
      withOutcome++;
      if (/success|ok|done|pass|complete/i.test(tr.outcome)) successes++;
    }
    if (alignment.length < (p.max_alignments ?? 100))
      alignment.push({
        trace_id: tr.id,
        matched_step_ids: matched,
        coverage: round(coverage),
        order_consistency: round(consistency),
        outcome: tr.outcome ?? null,
      });
  });

  const meanSupport = chosen.length ? chosen.reduce((a, c) => a + c.traces / T, 0) / chosen.length : 0;
  const factors = [
    { name: 'mean_step_support', value: round(meanSupport), weight: 0.4 },
    { name: 'order_consistency', value: round(sumOrder / T), weight: 0.3 },
    { name: 'success_rate', value: round(withOutcome ? successes / withOutcome : 0.5), weight: 0.2 },
    { name: 'sample_size', value: round(Math.min(1, T / 5)), weight: 0.1 },
  ];
  const score = round(
    Math.min(
      1,
      factors.reduce((a, f) => a + f.value * f.weight, 0),
    ),
  );
  const variations = [...stats.values()]
    .filter((s) => !keyIdx.has(s.key) && s.traces / T >= Math.min(0.2, minSupport) && s.traces >= 1)
    .sort(bySupport)
    .slice(0, 10)
    .map((s) => ({
      action: s.action,
      tool: s.tool,
      support: round(s.traces / T),
      reason: s.traces / T >= minSupport ? 'above support but over the step cap' : 'done in some traces only',
    }));

  const name = input.intent
    ? input.intent
    : chosen.length
      ? `${chosen[0].action} → ${chosen[chosen.length - 1].action}`
      : 'empty procedure';
  return {
    procedure: {
      name,
      intent: input.intent ?? null,
      steps: chosen.map((c, k) => ({
        id: ids[k],
        order: k + 1,
        action: c.action,
        tool: c.tool,
        support: round(c.traces / T),
        optional: c.traces / T < 0.9,
        variable_names: varNames[k],
        constants: constants[k].slice(0, 20),
      })),
    },
    common_sequence: ids,
    variables,
    trace_alignment: alignment,
    variations,
    confidence: { score, factors },
    integration_hints: [
      {
        kind: 'skill',
        target: 'skills',
        detail: `save as a reusable procedure with ${variables.length} parameter(s): ${
          variables
            .map((v) => v.name)
            .slice(0, 8)
            .join(', ') || 'none'
        }`,
      },
      {
        kind: 'workflow',
        target: '/v1/workflow/grammar/compile',
        detail: `use the ${ids.length} steps as actions, in order; dry run first`,
      },
      ...(score < 0.6
        ? [
            {
              kind: 'review',
              target: 'human',
              detail: `confidence ${score}: collect more traces or confirm the optional steps`,
            },
          ]
        : []),
    ],
  };
}

export const proceduralCrystallize = defineReasoning({
  path: '/procedural/crystallize',
  summary:
    'Crystallize repeated action traces into a reusable procedure with common sequence, variables and confidence.',
  request: proceduralCrystallizeRequest,
  response: proceduralCrystallizeResponse,
  compile: compileProceduralCrystallize,
  example: {
    surface: 'desktop',
    intent: 'Onboard a new customer account',
    traces: [
      {
        id: 't1',
        outcome: 'success',
        steps: [
          { action: 'open CRM', tool: 'HubSpot' },
          {
            action: 'create contact',
            tool: 'HubSpot',
            params: [
              { name: 'email', value: 'ana@acme.io' },
              { name: 'plan', value: 'pro' },
            ],
          },
          { action: 'send welcome email', tool: 'Gmail', target: 'ana@acme.io' },
          {
            action: 'create invoice',
            tool: 'Stripe',
            params: [
              { name: 'amount', value: '490' },
              { name: 'currency', value: 'EUR' },
            ],
          },
        ],
      },
      {
        id: 't2',
        outcome: 'success',
        steps: [
          { action: 'Open CRM', tool: 'HubSpot' },
          {
            action: 'create contact',
            tool: 'HubSpot',
            params: [
              { name: 'email', value: 'bo@globex.com' },
              { name: 'plan', value: 'pro' },
            ],
          },
          {
            action: 'create invoice',
            tool: 'Stripe',
            params: [
              { name: 'amount', value: '990' },
              { name: 'currency', value: 'EUR' },
            ],
          },
          { action: 'send welcome email', tool: 'Gmail', target: 'bo@globex.com' },
        ],
      },
      {
        id: 't3',
        outcome: 'partial',
        steps: [
          { action: 'open CRM', tool: 'HubSpot' },
          { action: 'check duplicate', tool: 'HubSpot' },
          {
            action: 'create contact',
            tool: 'HubSpot',
            params: [
              { name: 'email', value: 'cy@initech.com' },
              { name: 'plan', value: 'pro' },
            ],
          },
          { action: 'send welcome email', tool: 'Gmail', target: 'cy@initech.com' },
        ],
      },
    ],
    preferences: { min_support: 0.6 },
  },
});

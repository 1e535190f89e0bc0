import { defineReasoning } from './types';
import {
  workflowGrammarRequest,
  workflowGrammarResponse,
  type WorkflowGrammarRequest,
  type WorkflowGrammarResponse,
} from '../schema/reasoning/workflow-grammar-compile';
import { buildDag, findCycles, topoOrder } from './lib/dag';
import { assignIds, hasDestructiveVerb, makeRuleMatcher, normKey, placeholders } from './lib/workflow-parts';
import { keywordSetEach, splitWords, splitWordsEach } from './lib/text-segments';

type Out = WorkflowGrammarResponse;
type Tool = NonNullable<WorkflowGrammarRequest['available_tools']>[number];
const q = (s: string) => JSON.stringify(s);
const round = (x: number, d = 3) => Math.round(x * 10 ** d) / 10 ** d;

/**
 * Compile a described workflow into a trigger/action graph: needs[] become edges (resolved
 * against step ids, titles and done signals), the rest become input variables; approval gates
 * come from destructive steps, approval rules, tools that require approval and the
 * require_human_approvals preference. Readiness is a weighted sum of named factors.
 */
export function compileWorkflowGrammar(input: WorkflowGrammarRequest, ctx: { surface?: string }): Out {
  const prefs = input.preferences ?? {};
  const maxNodes = prefs.max_nodes ?? 200;
  const dryRunFirst = prefs.dry_run_first ?? true;
  const acts = input.actions;
  const n = acts.length;
  const ids = assignIds(
    acts.map((a) => a.id),
    (i) => `a${i + 1}`,
    ['trigger'],
  );

  // Resolve needs: ids first, then titles, then done signals (first writer wins).
  const refs = new Map<string, number>();
  const claim = (k: string | undefined, i: number) => {
    if (!k) return;
    const key = normKey(k);
    if (!refs.has(key)) refs.set(key, i);
  };
  ids.forEach((id, i) => claim(id, i));
  acts.forEach((a, i) => claim(a.title, i));
  acts.forEach((a, i) => claim(a.done_signal, i));
  const dag = buildDag(
    ids,
    acts.map((a) => a.needs ?? []),
    (r) => refs.get(normKey(r)),
  );
  const cycles = findCycles(dag);
  const inCycle = new Uint8Array(n);
  for (const c of cycles) for (const v of c) inCycle[v] = 1;
  const { order, stuck } = topoOrder(dag);

  // Tools.
  const tools = new Map<string, Tool>();
  for (const t of input.available_tools ?? []) if (!tools.has(normKey(t.name))) tools.set(normKey(t.name), t);
  const readOnlyByVerb = new Map<string, string>();
  for (const t of input.available_tools ?? [])
    if (t.read_only)
      for (const v of t.actions ?? []) if (!readOnlyByVerb.has(normKey(v))) readOnlyByVerb.set(normKey(v), t.name);
  const toolOf = (i: number) => (acts[i].tool ? tools.get(normKey(acts[i].tool!)) : undefined);
  const unavailable = (i: number) => !!acts[i].tool && tools.size > 0 && !toolOf(i);
  const readOnly = (i: number): boolean | null => toolOf(i)?.read_only ?? null;
  // Word segmentation is the costly part: segment all titles in one pass, infer once per step.
  const titleWords = splitWordsEach(acts.map((a) => a.title));
  const guessedDestructive = acts.map((a, i) => !a.destructive && hasDestructiveVerb(titleWords[i]));
  const inferredDestructive = (i: number) => guessedDestructive[i];

  // Approval gates.
  // Most steps have no gate: they share one empty list until a reason is added (keeps large
  // workflows from holding one array per step).
  const NO_REASONS: string[] = [];
  const reasons: string[][] = acts.map(() => NO_REASONS);
  const gateOwner: (string | null)[] = acts.map(() => null);
  const matchWords = keywordSetEach(acts.map((a) => `${a.title} ${a.tool ?? ''}`));
  const matcher = makeRuleMatcher(
    acts.map((a, i) => ({
      keys: [ids[i], a.title, a.tool ?? ''].map(normKey).filter(Boolean),
      words: matchWords[i],
      destructive: !!a.destructive || inferredDestructive(i),
    })),
  );
  const add = (i: number, r: string) => {
    if (reasons[i].includes(r)) return;
    if (reasons[i] === NO_REASONS) reasons[i] = [];
    reasons[i].push(r);
  };
  for (let i = 0; i < n; i++) {
    if (acts[i].destructive) add(i, 'destructive');
    else if (inferredDestructive(i)) add(i, 'inferred_destructive');
    if (toolOf(i)?.requires_approval) add(i, 'tool_requires_approval');
    if (prefs.require_human_approvals && readOnly(i) !== true) add(i, 'human_approval_preference');
  }
  for (const rule of input.approvals ?? [])
    for (const i of matcher(rule.when)) {
      add(i, 'approval_rule');
      if (!gateOwner[i] && rule.owner) gateOwner[i] = rule.owner;
    }
  for (let i = 0; i < n; i++) if (reasons[i].length && !gateOwner[i]) gateOwner[i] = acts[i].owner ?? null;

  // Node budget: trigger first, then steps in topological order (cycle members last), each
  // with its gate; stop at the first step that no longer fits so included steps keep their prerequisites.
  const sequence = [...order, ...stuck];
  const included: number[] = [];
  let used = 1;
  for (const i of sequence) {
    const cost = reasons[i].length ? 2 : 1;
    if (used + cost > maxNodes) break;
    used += cost;
    included.push(i);
  }
  const isIn = new Uint8Array(n);
  for (const i of included) isIn[i] = 1;
  const gateIds = assignIds(
    ids.map((id) => `gate-${id}`),
    (i) => `gate-${i + 1}`,
    ['trigger', ...ids],
  );
  const entry = (i: number) => (reasons[i].length ? gateIds[i] : ids[i]);

  const nodes: Out['trigger_action_graph']['nodes'] = [
    {
      id: 'trigger',
      kind: 'trigger',
      label: input.trigger ?? 'manual start',
      tool: null,
      owner: null,
      read_only: null,
      destructive: false,
      in_cycle: false,
    },
  ];
  const edges: Out['trigger_action_graph']['edges'] = [];
  const after: string[][] = new Array<string[]>(n); // filled for included steps only
  for (const i of included) {
    const a = acts[i];
    if (reasons[i].length) {
      nodes.push({
        id: gateIds[i],
        kind: 'approval',
        label: `approve: ${a.title}`,
        tool: null,
        owner: gateOwner[i],
        read_only: null,
        destructive: false,
        in_cycle: false,
      });
      edges.push({ from: gateIds[i], to: ids[i], kind: 'gate' });
    }
    nodes.push({
      id: ids[i],
      kind: 'action',
      label: a.title,
      tool: a.tool ?? null,
      owner: a.owner ?? null,
      read_only: readOnly(i),
      destructive: !!a.destructive || inferredDestructive(i),
      in_cycle: !!inCycle[i],
    });
    const preds = dag.pred[i].filter((p) => isIn[p]);
    if (dag.pred[i].length === 0) edges.push({ from: 'trigger', to: entry(i), kind: 'trigger' });
    for (const p of preds) edges.push({ from: ids[p], to: entry(i), kind: 'needs' });
    after[i] = dag.pred[i].length === 0 ? ['trigger'] : preds.map((p) => ids[p]);
  }

  // Variables: {{placeholders}} anywhere, plus needs that name no step.
  const vars = new Map<string, { kind: 'placeholder' | 'input'; used_by: string[] }>();
  const note = (name: string, kind: 'placeholder' | 'input', by: string | null) => {
    const v = vars.get(name) ?? { kind, used_by: [] };
    if (by && !v.used_by.includes(by)) v.used_by.push(by);
    vars.set(name, v);
  };
  for (const t of [input.trigger, ...(input.conditions ?? [])])
    for (const p of placeholders(t)) note(p, 'placeholder', 'trigger');
  for (const t of [input.specification, ...(input.outputs ?? []), ...(input.constraints ?? [])])
    for (const p of placeholders(t)) note(p, 'placeholder', null);
  for (const i of included) {
    const a = acts[i];
    for (const t of [a.title, a.when, a.unless, a.done_signal])
      for (const p of placeholders(t)) note(p, 'placeholder', ids[i]);
  }
  const missingByNode = new Map<number, string[]>();
  for (const m of dag.missing) {
    if (!isIn[m.node]) continue;
    missingByNode.set(m.node, [...(missingByNode.get(m.node) ?? []), m.ref]);
    if (!vars.has(m.ref) || vars.get(m.ref)!.kind === 'input') note(m.ref, 'input', ids[m.node]);
  }
  const variables = [...vars]
    .map(([name, v]) => ({ name, ...v }))
    .sort((a, b) => (a.kind === b.kind ? 0 : a.kind === 'input' ? -1 : 1));

  const approval_gates = included
    .filter((i) => reasons[i].length)
    .map((i) => ({
      id: gateIds[i],
      action_id: ids[i],
      reasons: reasons[i],
      owner: gateOwner[i],
      detail: `Pause before "${acts[i].title}" until ${gateOwner[i] ?? 'an assigned approver'} approves (${reasons[i].join(', ')}).`,
    }));
  const unavailable_tools = included.filter(unavailable).map((i) => ({ action_id: ids[i], tool: acts[i].tool! }));

  // Failure modes.
  const fm: Out['failure_modes'] = [];
  const keptCycles = cycles.map((c) => c.filter((v) => isIn[v]).map((v) => ids[v])).filter((c) => c.length);
  for (const c of keptCycles)
    fm.push({
      kind: 'dependency_cycle',
      severity: 'blocker',
      node_id: c[0],
      detail: `Steps ${c.join(' → ')} need each other.`,
      mitigation: 'Break the cycle: remove one need or split a step.',
    });
  if (!input.trigger)
    fm.push({
      kind: 'missing_trigger',
      severity: 'high',
      node_id: 'trigger',
      detail: 'No trigger given; the workflow can only start by hand.',
      mitigation: 'Name the event that starts it.',
    });
  const hasDependents = (i: number) => dag.succ[i].length > 0;
  for (const i of included) {
    const a = acts[i];
    const tool = toolOf(i);
    if (unavailable(i))
      fm.push({
        kind: 'unavailable_tool',
        severity: 'blocker',
        node_id: ids[i],
        detail: `Tool "${a.tool}" is not among available_tools.`,
        mitigation: 'Connect the tool or reassign the step to an available one.',
      });
    if (tool?.actions?.length && !splitWords(a.title).some((w) => tool.actions!.some((v) => normKey(v) === w)))
      fm.push({
        kind: 'capability_mismatch',
        severity: 'medium',
        node_id: ids[i],
        detail: `"${a.tool}" lists ${tool.actions.join(', ')}; none appears in the step.`,
        mitigation: 'Check that the tool can do this step.',
      });
    if ((a.destructive || inferredDestructive(i)) && !a.unless && !a.when)
      fm.push({
        kind: 'unguarded_destructive',
        severity: 'high',
        node_id: ids[i],
        detail: 'Destructive step with no when/unless guard.',
        mitigation: 'Add a guard and keep the approval gate.',
      });
    if (inferredDestructive(i))
      fm.push({
        kind: 'unflagged_destructive',
        severity: 'medium',
        node_id: ids[i],
        detail: 'Wording suggests a destructive effect but destructive is not set.',
        mitigation: 'Set destructive: true if it cannot be undone.',
      });
    if (reasons[i].length && !gateOwner[i])
      fm.push({
        kind: 'gate_without_owner',
        severity: 'high',
        node_id: gateIds[i],
        detail: 'Approval gate has no approver.',
        mitigation: 'Give the step an owner or an approvals[] rule with an owner.',
      });
    if (hasDependents(i) && !a.done_signal)
      fm.push({
        kind: 'missing_done_signal',
        severity: 'low',
        node_id: ids[i],
        detail: 'Later steps depend on this one but it has no done signal.',
        mitigation: 'Name an observable completion signal.',
      });
    for (const ref of missingByNode.get(i) ?? [])
      fm.push({
        kind: 'unresolved_input',
        severity: 'medium',
        node_id: ids[i],
        detail: `Needs "${ref}", which no step produces.`,
        mitigation: 'Bind it as an input variable or add the producing step.',
      });
    if (prefs.prefer_read_only && readOnly(i) !== true) {
      const alt = splitWords(a.title)
        .map((w) => readOnlyByVerb.get(w))
        .find((t) => t && normKey(t) !== normKey(a.tool ?? ''));
      if (alt)
        fm.push({
          kind: 'read_only_alternative',
          severity: 'low',
          node_id: ids[i],
          detail: `Read-only tool "${alt}" offers this verb.`,
          mitigation: `Prefer "${alt}" if the step only needs to read.`,
        });
    }
  }
  for (const e of input.exceptions ?? [])
    fm.push({
      kind: 'declared_exception',
      severity: 'medium',
      node_id: null,
      detail: e,
      mitigation: 'Halt the run and route to the workflow owner.',
    });
  if (included.length < n)
    fm.push({
      kind: 'graph_truncated',
      severity: 'medium',
      node_id: null,
      detail: `${n - included.length} step(s) exceed max_nodes=${maxNodes}.`,
      mitigation: 'Raise max_nodes or split the workflow.',
    });

  // Readiness: explicit weighted factors over all steps.
  const frac = (num: number, den: number) => (den === 0 ? 1 : num / den);
  const gated = acts.map((_, i) => i).filter((i) => reasons[i].length);
  const needTotal = acts.reduce((s, a) => s + (a.needs?.length ?? 0), 0);
  const withDeps = acts.map((_, i) => i).filter(hasDependents);
  const cycleCount = inCycle.reduce((s, x) => s + x, 0);
  const unavailableCount = acts.filter((_, i) => unavailable(i)).length;
  const F: [string, number, number, string][] = [
    ['trigger_defined', 0.1, input.trigger ? 1 : 0, input.trigger ? 'trigger given' : 'no trigger'],
    ['graph_acyclic', 0.2, 1 - frac(cycleCount, n), `${cycleCount} step(s) in cycles`],
    ['tools_available', 0.2, 1 - frac(unavailableCount, n), `${unavailableCount} step(s) use unavailable tools`],
    [
      'inputs_resolved',
      0.1,
      frac(needTotal - dag.missing.length, needTotal),
      `${dag.missing.length} of ${needTotal} needs are external inputs`,
    ],
    ['owners_assigned', 0.1, frac(acts.filter((a) => a.owner).length, n), 'share of steps with an owner'],
    [
      'done_signals',
      0.1,
      frac(withDeps.filter((i) => acts[i].done_signal).length, withDeps.length),
      'share of depended-on steps with a done signal',
    ],
    ['approvals_owned', 0.15, frac(gated.filter((i) => gateOwner[i]).length, gated.length), `${gated.length} gate(s)`],
    ['within_node_budget', 0.05, frac(included.length, n), `${included.length} of ${n} steps fit max_nodes`],
  ];
  const factors = F.map(([name, weight, value, detail]) => ({
    name,
    weight,
    value: round(value),
    contribution: round(weight * value),
    detail,
  }));
  const score = round(100 * factors.reduce((s, f) => s + f.weight * f.value, 0), 1);
  const blockers = [
    ...(cycleCount ? [`${cycleCount} step(s) in dependency cycles`] : []),
    ...(unavailableCount ? [`${unavailableCount} step(s) use unavailable tools`] : []),
  ];
  const level = blockers.length ? 'blocked' : score >= 80 ? 'ready' : 'needs_review';

  // Compiled expression and dry run, in graph order.
  const title = input.title ?? input.intent ?? 'workflow';
  const lines = [
    `WORKFLOW ${q(title)}`,
    `ON ${q(input.trigger ?? 'manual')}${(input.conditions ?? []).map((c, k) => `${k ? ' AND' : ' IF'} ${q(c)}`).join('')}`,
  ];
  for (const c of input.constraints ?? []) lines.push(`REQUIRE ${q(c)}`);
  const steps: Out['dry_run_plan']['steps'] = [
    {
      step: 1,
      node_id: 'trigger',
      mode: 'observe_trigger',
      instruction: `Replay a sample "${input.trigger ?? 'manual start'}" event without side effects.`,
      after: [],
    },
  ];
  for (const i of included) {
    const a = acts[i];
    if (reasons[i].length) {
      lines.push(
        `GATE ${gateIds[i]} APPROVE BY ${q(gateOwner[i] ?? 'UNASSIGNED')} FOR ${reasons[i].join('|')} BEFORE ${ids[i]}`,
      );
      steps.push({
        step: steps.length + 1,
        node_id: gateIds[i],
        mode: 'approval_checkpoint',
        instruction: `Record that ${gateOwner[i] ?? 'an approver'} would be asked to approve; do not wait.`,
        after: after[i],
      });
    }
    const parts = [`STEP ${ids[i]} = ${a.tool ? q(a.tool) : 'MANUAL'}(${q(a.title)})`];
    if (a.owner) parts.push(`BY ${q(a.owner)}`);
    parts.push(`AFTER ${after[i].join(', ') || 'NOTHING'}`);
    if (a.when) parts.push(`WHEN ${q(a.when)}`);
    if (a.unless) parts.push(`UNLESS ${q(a.unless)}`);
    if (a.done_signal) parts.push(`DONE ${q(a.done_signal)}`);
    lines.push(parts.join(' '));
    const blocked = unavailable(i) || inCycle[i];
    const mode = blocked ? 'skip_blocked' : readOnly(i) ? 'read' : 'simulate';
    const instruction =
      mode === 'skip_blocked'
        ? `Skip "${a.title}": ${inCycle[i] ? 'it is in a dependency cycle' : `tool "${a.tool}" is unavailable`}.`
        : mode === 'read'
          ? `Call "${a.tool}" read-only for "${a.title}" and check ${a.done_signal ? `"${a.done_signal}"` : 'the response shape'}.`
          : `Do not call ${a.tool ? `"${a.tool}"` : 'anyone'}; render "${a.title}" with sample variables and check ${a.done_signal ? `"${a.done_signal}"` : 'the expected effect'} would appear.`;
    steps.push({
      step: steps.length + 1,
      node_id: ids[i],
      mode,
      instruction,
      after: reasons[i].length ? [gateIds[i]] : after[i],
    });
  }
  for (const e of input.exceptions ?? []) lines.push(`ON_EXCEPTION ${q(e)} HALT`);
  for (const o of input.outputs ?? []) lines.push(`EMIT ${q(o)}`);

  const inputs = variables.filter((v) => v.kind === 'input');
  return {
    surface: ctx.surface ?? input.surface ?? null,
    title,
    trigger_action_graph: {
      nodes,
      edges,
      topological_order: order.filter((i) => isIn[i]).map((i) => ids[i]),
      cycles: keptCycles,
      truncated: included.length < n,
      omitted_actions: n - included.length,
    },
    variables,
    approval_gates,
    unavailable_tools,
    failure_modes: fm,
    readiness_score: { score, level, factors, blockers },
    compiled_expression: lines.join('\n'),
    dry_run_plan: { required_before_live: dryRunFirst, steps },
    integration_hints: [
      {
        kind: 'trigger',
        target: input.trigger ?? 'manual',
        detail: 'Subscribe your event source to this trigger; the service never starts runs.',
      },
      {
        kind: 'approval',
        target: 'approval_gates',
        detail: `${approval_gates.length} gate(s) to route into your approval inbox before the gated step runs.`,
      },
      {
        kind: 'variables',
        target: 'variables',
        detail: inputs.length
          ? `Bind ${inputs.length} input(s) before a run: ${inputs
              .slice(0, 5)
              .map((v) => v.name)
              .join(', ')}.`
          : 'No unbound inputs.',
      },
      {
        kind: 'dry_run',
        target: 'dry_run_plan',
        detail: dryRunFirst
          ? 'Run the dry-run plan and require it to pass before the first live run.'
          : 'Dry run optional (dry_run_first is false).',
      },
    ],
  };
}

export const workflowGrammarCompile = defineReasoning({
  path: '/workflow/grammar/compile',
  summary: 'Compile a workflow description into a gated trigger/action graph with readiness and dry-run plan',
  request: workflowGrammarRequest,
  response: workflowGrammarResponse,
  compile: compileWorkflowGrammar,
  example: {
    surface: 'ops',
    title: 'Refund damaged orders',
    intent: 'Refund customers whose order arrived damaged',
    trigger: 'support ticket tagged damaged',
    conditions: ['order total under {{refund_limit}}'],
    outputs: ['refund receipt sent to {{customer_email}}'],
    exceptions: ['payment provider timeout'],
    actions: [
      {
        id: 'lookup',
        title: 'Read order {{order_id}}',
        tool: 'shop',
        needs: [],
        done_signal: 'order loaded',
        owner: 'support',
      },
      {
        id: 'refund',
        title: 'Refund order payment',
        tool: 'payments',
        needs: ['order loaded', 'photo evidence'],
        destructive: true,
        owner: 'finance',
      },
      { id: 'notify', title: 'Email the customer', tool: 'mailer', needs: ['refund'], done_signal: 'email sent' },
      { id: 'close', title: 'Close ticket', tool: 'helpdesk', needs: ['notify'] },
    ],
    available_tools: [
      { name: 'shop', kind: 'commerce', actions: ['read'], read_only: true },
      { name: 'payments', kind: 'finance', actions: ['refund'], requires_approval: true },
      { name: 'mailer', kind: 'email', actions: ['email', 'send'] },
    ],
    approvals: [{ when: 'email customer', owner: 'support lead', reason: 'customer touch' }],
    preferences: { max_nodes: 50, dry_run_first: true },
  },
});

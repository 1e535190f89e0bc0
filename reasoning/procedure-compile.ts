import { defineReasoning } from './types';
import {
  procedureCompileRequest,
  procedureCompileResponse,
  type ProcedureCompileRequest,
  type ProcedureCompileResponse,
} from '../schema/reasoning/procedure-compile';
import { JUDGEMENT, StepMatcher, transcriptSteps, stepKind } from './lib/procedure-steps';
import { clip, keywordSetEach, slug } from './lib/text-segments';

/**
 * SOP compilation: transcript sentences that describe steps and observed executions are merged
 * into one ordered step list (same step = same normalised key), tools are matched against the
 * declared tool list, and automation readiness is scored from explicit factors.
 */
type Step = ProcedureCompileResponse['sop']['steps'][number];
const round = (x: number) => Math.round(x * 1000) / 1000;

export function compileProcedure(input: ProcedureCompileRequest, _ctx: { surface?: string }): ProcedureCompileResponse {
  const maxSteps = input.preferences.max_steps ?? 30;
  const toolNames = input.tools
    .filter((t) => t.trim())
    .map((t) => ({ name: t, re: new RegExp(`\\b${t.trim().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`, 'i') }));
  const findTool = (text: string) => toolNames.find((t) => t.re.test(text))?.name ?? null;
  const unlisted = new Set<string>();

  const steps: Step[] = [];
  const matcher = new StepMatcher();
  const outcomes: string[] = [];
  const add = (
    action: string,
    kind: Step['kind'],
    actor: string | null,
    tool: string | null,
    ev: Step['evidence'][number],
    words?: string[],
  ) => {
    const found = matcher.match(action, words);
    const prev = found === null ? undefined : steps[found];
    if (prev) {
      if (prev.evidence.length < 20) prev.evidence.push(ev);
      prev.tool ??= tool;
      prev.actor ??= actor;
      return;
    }
    if (steps.length >= maxSteps) return;
    const s: Step = {
      id: `step-${steps.length + 1}`,
      order: steps.length + 1,
      action: clip(action, 200),
      kind,
      actor,
      tool,
      evidence: [ev],
    };
    steps.push(s);
    matcher.add(action, words);
  };
  for (const r of transcriptSteps(input.transcript ?? '')) {
    const m = /\b(?:in|on|using|with|via)\s+([A-Z][\w.-]+(?:\s[A-Z][\w.-]+)?)/.exec(r.action);
    const tool = findTool(r.action);
    if (!tool && m && !/^(The|A|An|My|Our)$/.test(m[1])) unlisted.add(m[1]);
    add(r.action, r.kind, input.actor ?? null, tool, { source: 'transcript', index: r.index });
  }
  const titleWords = keywordSetEach(input.observations.map((o) => o.title)); // one segmenter pass
  input.observations.forEach((o, index) => {
    const text = `${o.title}${o.detail ? ` ${o.detail}` : ''}`;
    const tool = o.tool?.trim() || findTool(text);
    if (o.tool && !findTool(o.tool)) unlisted.add(o.tool.trim());
    add(
      o.title,
      stepKind(o.title),
      o.actor ?? input.actor ?? null,
      tool,
      { source: 'observation', index },
      titleWords[index],
    );
    if (o.outcome) outcomes.push(o.outcome.toLowerCase());
  });
  if (!steps.length)
    add(input.title, 'action', input.actor ?? null, findTool(input.title), { source: 'transcript', index: 0 });

  // Checklist: one line per step, then the constraints, outputs and success signal.
  const checklist: ProcedureCompileResponse['checklist'] = steps.map((s) => ({
    id: `chk-${s.order}`,
    step_id: s.id,
    text:
      s.kind === 'decision' && !/^(if|when|unless|in case|otherwise)\b/i.test(s.action)
        ? `Decide: ${s.action}`
        : s.action,
  }));
  const extra = [
    ...input.constraints.map((c) => `Constraint respected: ${c}`),
    ...input.outputs.map((o) => `Output produced: ${o}`),
    ...(input.outcome_signal ? [`Success signal seen: ${input.outcome_signal}`] : []),
  ];
  extra.forEach((text, k) => checklist.push({ id: `chk-x${k + 1}`, step_id: null, text }));

  // Readiness factors (weights sum to 1).
  const withTool = steps.filter((s) => s.tool).length / steps.length;
  const freq = (input.frequency ?? '').toLowerCase();
  const repetition = /hour|daily|every day|per (order|ticket|request|invoice)|each/.test(freq)
    ? 1
    : /week/.test(freq)
      ? 0.7
      : /month/.test(freq)
        ? 0.4
        : freq
          ? 0.3
          : 0.2;
  const successes = outcomes.filter((o) => /success|ok|done|pass|complete/.test(o)).length;
  const failures = outcomes.filter((o) => /fail|error|wrong|reject|partial/.test(o)).length;
  const evidence = Math.min(1, input.observations.length / 10) * (outcomes.length ? successes / outcomes.length : 0.5);
  const judgement = steps.filter((s) => s.kind === 'decision' || JUDGEMENT.test(s.action));
  const simplicity = 1 - judgement.length / steps.length;
  const io = (input.inputs.length ? 0.5 : 0) + (input.outputs.length || input.outcome_signal ? 0.5 : 0);
  const factors = [
    { name: 'steps_with_tool', value: round(withTool), weight: 0.3 },
    { name: 'repetition', value: repetition, weight: 0.2 },
    { name: 'observed_success', value: round(evidence), weight: 0.2 },
    { name: 'low_judgement', value: round(simplicity), weight: 0.15 },
    { name: 'defined_inputs_outputs', value: io, weight: 0.15 },
  ];
  const score = Math.round(factors.reduce((a, f) => a + f.value * f.weight, 0) * 1000) / 10;
  const blockers = [
    ...judgement.map((s) => ({
      step_id: s.id,
      reason: s.kind === 'decision' ? 'branching decision needs an explicit rule' : 'relies on human judgement',
    })),
    ...steps
      .filter((s) => !s.tool && s.kind !== 'decision')
      .slice(0, 10)
      .map((s) => ({ step_id: s.id, reason: 'no tool identified for this step' })),
    ...(failures ? [{ step_id: null, reason: `${failures} observed execution(s) failed or were partial` }] : []),
  ];
  const tier = score >= 70 ? 'automatable' : score >= 40 ? 'assisted' : 'manual';
  const automateFirst = steps
    .filter((s) => s.tool && s.kind !== 'decision' && !JUDGEMENT.test(s.action))
    .slice(0, 3)
    .map((s) => s.id);
  const tools = [...new Set(steps.map((s) => s.tool).filter((t): t is string => !!t))];
  const roles = [
    ...new Set([input.actor, ...input.observations.map((o) => o.actor)].filter((a): a is string => !!a && !!a.trim())),
  ].slice(0, 20);

  return {
    sop: {
      title: input.title,
      purpose: clip(
        input.description ??
          `Perform "${input.title}" the same way every time${input.outcome_signal ? `, until ${input.outcome_signal}` : ''}.`,
        400,
      ),
      roles,
      preconditions: [...input.inputs.map((i) => `Have: ${i}`), ...input.constraints.map((c) => `Respect: ${c}`)],
      steps,
      outputs: input.outputs,
      success_signal: input.outcome_signal ?? null,
    },
    checklist,
    skill_candidate: {
      name: slug(input.title),
      trigger: input.frequency ? `${input.frequency}: ${steps[0].action}` : `on request: ${steps[0].action}`,
      inputs: input.inputs,
      outputs: input.outputs,
      tools,
      step_ids: steps.map((s) => s.id),
      confidence: round(
        Math.min(1, 0.3 + 0.1 * Math.min(input.observations.length, 5) + 0.2 * withTool) *
          (failures > successes ? 0.6 : 1),
      ),
    },
    automation_readiness: { score, factors, blockers, unlisted_tools: [...unlisted].sort().slice(0, 20) },
    skill_tier_seed: {
      tier,
      reason: `readiness ${score}/100: ${Math.round(withTool * 100)}% of steps have an identified tool, ${judgement.length} judgement step(s)`,
      automate_first: automateFirst,
    },
    integration_hints: [
      {
        kind: 'skill_registry',
        target: 'skills',
        detail: `register "${slug(input.title)}" as a ${tier} skill with ${steps.length} steps`,
      },
      { kind: 'checklist', target: input.surface ?? 'app', detail: `render ${checklist.length} checklist items` },
      ...(automateFirst.length
        ? [
            {
              kind: 'automation',
              target: 'workflows',
              detail: `draft a workflow for ${automateFirst.join(', ')} via /v1/workflow/grammar/compile (dry run first)`,
            },
          ]
        : []),
    ],
  };
}

export const procedureCompile = defineReasoning({
  path: '/procedure/compile',
  summary:
    'Compile a narrated procedure and observed executions into an SOP, checklist, skill candidate and automation readiness.',
  request: procedureCompileRequest,
  response: procedureCompileResponse,
  compile: compileProcedure,
  example: {
    surface: 'ops',
    title: 'Month-end invoice reconciliation',
    description: 'Match paid invoices against bank transactions and flag gaps.',
    transcript:
      'First I export the bank statement from Online Banking as CSV. Then I open the unpaid invoices in Xero. ' +
      'I match each payment to an invoice by amount and reference. If an amount differs, I decide whether to write it off or chase the customer. ' +
      'Finally I send the reconciliation report to Dana by email.',
    actor: 'bookkeeper',
    tools: ['Xero', 'email'],
    inputs: ['bank statement CSV', 'open invoices'],
    outputs: ['reconciliation report'],
    constraints: ['never write off more than 50 EUR without approval'],
    frequency: 'monthly',
    outcome_signal: 'all invoices matched or flagged',
    observations: [
      { title: 'Match each payment to an invoice', tool: 'Xero', outcome: 'success', actor: 'bookkeeper' },
      { title: 'Export the bank statement', tool: 'Online Banking', outcome: 'success' },
      { title: 'Send reconciliation report', tool: 'email', outcome: 'partial', evidence: 'report missing two rows' },
    ],
  },
});

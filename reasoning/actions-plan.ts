import { defineReasoning } from './types';
import {
  actionsPlanRequest,
  actionsPlanResponse,
  type ActionsPlanRequest,
  type ActionsPlanResponse,
} from '../schema/reasoning/actions-plan';
import { classifyEffects, forbiddenWords, sensitiveInputs, type EffectClass } from './lib/action-effects';
import { assignIds, normKey } from './lib/workflow-parts';
import { keywordSetEach, keywordsOfWords, splitWordsEach } from './lib/text-segments';

type Out = ActionsPlanResponse;
type Risk = Out['risk_tolerance'];
const round = (x: number) => Math.round(x * 1000) / 1000;

const WEIGHTS: Record<Risk, Record<string, number>> = {
  low: { reliability: 0.45, cost: 0.1, availability: 0.2, capability_match: 0.1, policy_fit: 0.15 },
  medium: { reliability: 0.35, cost: 0.2, availability: 0.2, capability_match: 0.15, policy_fit: 0.1 },
  high: { reliability: 0.25, cost: 0.3, availability: 0.2, capability_match: 0.15, policy_fit: 0.1 },
};
const FACTORS = ['reliability', 'cost', 'availability', 'capability_match', 'policy_fit'];
/** Factors are only materialised for the candidates that are kept. */
const factorList = (W: Record<string, number>, values: Record<string, number>) =>
  FACTORS.map((name) => ({
    name,
    weight: W[name],
    value: round(values[name]),
    contribution: round(W[name] * values[name]),
  }));
const POLICY_FLAG: Partial<
  Record<
    EffectClass,
    'require_for_external_writes' | 'require_for_customer_touch' | 'require_for_money' | 'require_for_destructive'
  >
> = {
  external_write: 'require_for_external_writes',
  customer_touch: 'require_for_customer_touch',
  money: 'require_for_money',
  destructive: 'require_for_destructive',
};

/**
 * Rank (action, provider) candidates by explicit weighted factors (reliability, relative cost,
 * availability, capability match, policy fit; weights shift with risk tolerance), route each
 * action to its best eligible provider with a fallback, and gate effects per approval_policy.
 * Candidate providers come from indexes (id/name, capability, capability words), never a scan
 * of every provider per action beyond a fixed cap.
 */
export function planActions(input: ActionsPlanRequest, ctx: { surface?: string }): Out {
  const risk: Risk =
    (['low', 'medium', 'high'] as const).find((r) => r === normKey(input.risk_tolerance ?? '')) ?? 'medium';
  const W = WEIGHTS[risk];
  const maxCandidates = input.preferences?.max_candidates ?? 50;
  const perAction = input.preferences?.max_providers_per_action ?? 3;
  const policy = input.approval_policy ?? {};
  const autonomous = new Set(
    (policy.allowed_autonomous_effects ?? []).map((e) =>
      e
        .toLowerCase()
        .trim()
        .replace(/[\s-]+/g, '_'),
    ),
  );
  const hints: NonNullable<ActionsPlanRequest['action_hints']> = input.action_hints?.length
    ? input.action_hints
    : [{ title: input.intent }];
  const ids = assignIds(
    hints.map((h) => h.id),
    (i) => `h${i + 1}`,
    [],
  );
  const seenIds = new Set<string>();
  // Duplicate provider ids are ambiguous: the first entry wins.
  const providers = (input.available_providers ?? []).filter((p) => !seenIds.has(p.id) && !!seenIds.add(p.id));
  const forbidden = forbiddenWords(input.constraints ?? []);

  const byName = new Map<string, number>();
  const byCap = new Map<string, number[]>();
  const byCapWord = new Map<string, number[]>();
  const push = (m: Map<string, number[]>, k: string, i: number) => {
    const l = m.get(k) ?? [];
    if (l[l.length - 1] !== i) l.push(i);
    m.set(k, l);
  };
  const maxCost = providers.reduce((m, p) => Math.max(m, p.cost ?? 0), 0);
  const isBanned = providers.map((p) => [p.id, p.name ?? ''].some((k) => k && forbidden.has(k.toLowerCase())));
  const costValue = providers.map((p) => (maxCost > 0 ? 1 - (p.cost ?? 0) / maxCost : 1));
  // Capability postings list providers best-first by their action-independent factors, so
  // taking the head of a posting list finds the top providers without scoring all of them.
  const staticScore = providers.map(
    (p, i) =>
      W.reliability * (p.reliability ?? 0.5) +
      W.cost * costValue[i] +
      W.availability * (p.available === false ? 0 : 1) +
      W.policy_fit * (isBanned[i] ? 0 : p.requires_approval ? 0.7 : 1),
  );
  const byStatic = providers.map((_, i) => i).sort((x, y) => staticScore[y] - staticScore[x] || x - y);
  providers.forEach((p, i) => {
    for (const k of [p.id, p.name ?? '']) if (k && !byName.has(normKey(k))) byName.set(normKey(k), i);
  });
  const caps = byStatic.flatMap((i) => (providers[i].capabilities ?? []).map((c) => ({ i, c })));
  const capWords = keywordSetEach(caps.map((x) => x.c)); // one segmenter pass per batch
  caps.forEach(({ i, c }, k) => {
    push(byCap, normKey(c), i);
    for (const w of capWords[k]) push(byCapWord, w, i);
  });
  const headSize = perAction * 3 + 4;

  // Factor lists are built only for the candidates that make the ranked output (see `ranked`).
  const all: (Omit<Out['ranked_action_candidates'][number], 'factors' | 'rank'> & {
    values: Record<string, number> | null;
  })[] = [];
  const best: { provider: number; eligible: boolean }[][] = [];
  // Words of every hint from one segmenter pass per batch (a segment() call per hint is GC-bound on long lists).
  const titleWords = splitWordsEach(hints.map((h) => h.title));
  const toolWords = splitWordsEach(hints.map((h) => h.tool ?? ''));
  const hintWords = splitWordsEach(hints.map((h) => `${h.title} ${h.tool ?? ''}`));
  const effectsOf = hints.map((h, a) => classifyEffects(h, { titleWords: titleWords[a], toolWords: toolWords[a] }));
  hints.forEach((h, a) => {
    const { classes } = effectsOf[a];
    const isWrite = classes[0] === 'write';
    const match = new Map<number, number>();
    const offer = (i: number | undefined, v: number) => {
      if (i !== undefined && !match.has(i)) match.set(i, v);
    };
    if (h.provider) offer(byName.get(normKey(h.provider)), 1);
    if (h.tool) for (const i of (byCap.get(normKey(h.tool)) ?? []).slice(0, headSize)) offer(i, 1);
    for (const w of keywordsOfWords(hintWords[a]))
      for (const i of (byCapWord.get(w) ?? []).slice(0, headSize)) offer(i, 0.6);
    // Score every matched provider with plain numbers; notes and factor objects are only built
    // for the few that are kept (keeps 10,000 actions x many providers cheap).
    const evaluate = (i: number, capability: number) => {
      const p = providers[i];
      const notes: string[] = [];
      let policyFit = 1;
      let eligible = true;
      if (p.available === false) {
        eligible = false;
        notes.push('provider unavailable');
      }
      if (p.read_only && isWrite) {
        eligible = false;
        policyFit = 0;
        notes.push('read-only provider cannot perform a write');
      }
      if (isBanned[i]) {
        eligible = false;
        policyFit = 0;
        notes.push('provider excluded by a constraint');
      }
      if (p.requires_approval) {
        policyFit *= 0.7;
        notes.push('provider requires approval');
      }
      const values: Record<string, number> = {
        reliability: p.reliability ?? 0.5,
        cost: costValue[i],
        availability: p.available === false ? 0 : 1,
        capability_match: capability,
        policy_fit: policyFit,
      };
      return {
        i,
        eligible,
        score: round(FACTORS.reduce((s, name) => s + W[name] * round(values[name]), 0)),
        values,
        notes,
      };
    };
    const quick = [...match].map(([i, capability]) => {
      const p = providers[i];
      const blocked = p.available === false || (p.read_only && isWrite) || isBanned[i];
      const fit = (p.read_only && isWrite) || isBanned[i] ? 0 : p.requires_approval ? 0.7 : 1;
      const score = round(
        W.reliability * round(p.reliability ?? 0.5) +
          W.cost * round(costValue[i]) +
          W.availability * (p.available === false ? 0 : 1) +
          W.capability_match * capability +
          W.policy_fit * fit,
      );
      return { i, capability, eligible: !blocked, score };
    });
    quick.sort((x, y) => Number(y.eligible) - Number(x.eligible) || y.score - x.score || x.i - y.i);
    const kept = quick.slice(0, perAction).map((q) => evaluate(q.i, q.capability));
    best.push(kept.map((s) => ({ provider: s.i, eligible: s.eligible })));
    const labels = effectsOf[a].declared.length
      ? [...classes, ...effectsOf[a].declared.filter((d) => !classes.includes(d as EffectClass))]
      : classes;
    if (kept.length === 0)
      all.push({
        action_id: ids[a],
        title: h.title,
        provider_id: null,
        score: 0,
        values: null,
        effects: labels,
        eligible: false,
        notes: ['no available provider offers this capability; plan it as a manual step'],
      });
    for (const s of kept)
      all.push({
        action_id: ids[a],
        title: h.title,
        provider_id: providers[s.i].id,
        score: s.score,
        values: s.values,
        effects: labels,
        eligible: s.eligible,
        notes: s.notes,
      });
  });
  const order = all.map((_, k) => k);
  order.sort((x, y) => Number(all[y].eligible) - Number(all[x].eligible) || all[y].score - all[x].score || x - y);
  const ranked = order.slice(0, maxCandidates).map((k, r) => {
    const { values, ...c } = all[k];
    return { rank: r + 1, ...c, factors: values ? factorList(W, values) : [] };
  });

  // Gates, labels, route.
  const gated: Out['approval_gate']['gated_actions'] = [];
  const autonomousIds: string[] = [];
  const route: Out['recommended_provider_route'] = [];
  const labels: Out['policy_labels'] = [];
  const chosen: (string | null)[] = [];
  hints.forEach((h, a) => {
    const { classes } = effectsOf[a];
    const eligible = best[a].filter((b) => b.eligible);
    const prov = eligible[0] ? providers[eligible[0].provider] : undefined;
    chosen.push(prov?.id ?? null);
    const reasons: string[] = [];
    for (const c of classes) {
      const flag = POLICY_FLAG[c];
      if (flag && (policy[flag] ?? true) && !autonomous.has(c)) reasons.push(c);
    }
    if (prov?.requires_approval) reasons.push('provider_requires_approval');
    if (risk === 'low' && classes[0] === 'write' && !reasons.length && !autonomous.has('write'))
      reasons.push('low_risk_tolerance');
    const words = new Set([...hintWords[a], ...classes]);
    const conflict = [...forbidden].find((w) => words.has(w));
    if (conflict) reasons.push(`constraint_conflict:${conflict}`);
    if (reasons.length) gated.push({ action_id: ids[a], reasons });
    else autonomousIds.push(ids[a]);
    route.push({
      step: a + 1,
      action_id: ids[a],
      provider_id: prov?.id ?? null,
      fallback_provider_id: eligible[1] ? providers[eligible[1].provider].id : null,
      requires_approval: reasons.length > 0,
    });
    labels.push({
      action_id: ids[a],
      labels: [
        ...classes,
        reasons.length ? 'requires_approval' : 'autonomous_ok',
        ...(prov ? [] : ['no_provider']),
        ...(conflict ? ['constraint_conflict'] : []),
      ],
    });
  });

  // Audit, dry run, memory.
  const mem = input.memory_policy ?? {};
  const minimize = mem.minimize_context ?? false;
  const recordOutcome = mem.record_outcome ?? true;
  const prohibited = new Set((mem.prohibited_memory_kinds ?? []).map(normKey));
  const storeKinds = (
    mem.allowed_memory_kinds?.length ? mem.allowed_memory_kinds : ['decision', 'provider_preference', 'outcome']
  ).filter((k) => !prohibited.has(normKey(k)));
  const canStore = (k: string) => storeKinds.some((s) => normKey(s) === k);
  const records = hints.map((h, a) => {
    const inputs = h.inputs ?? [];
    return {
      action_id: ids[a],
      fields: [
        'action_id',
        'provider_id',
        minimize ? 'input_names' : 'inputs',
        'effects',
        'approval_decision',
        'result_status',
      ],
      redact: minimize ? inputs : sensitiveInputs(inputs),
    };
  });
  const dry = hints.map((h, a) => {
    const c = effectsOf[a].classes;
    const who = chosen[a] ? `"${chosen[a]}"` : 'the manual operator';
    const parts = [
      c[0] === 'read'
        ? `Call ${who} with read scope only and check the response for "${h.title}".`
        : `Prepare "${h.title}" for ${who} without committing it.`,
    ];
    if (c.includes('money')) parts.push('Quote only: request a preview of amounts; never capture, charge or transfer.');
    if (c.includes('customer_touch'))
      parts.push(`Render the message to ${policy.approval_owner ?? 'an internal reviewer'} instead of the customer.`);
    if (c.includes('destructive')) parts.push('List what would be removed (count and ids) without removing anything.');
    if (c.includes('external_write')) parts.push("Use the provider's sandbox or validate-only mode.");
    if (!chosen[a]) parts.push('No provider qualifies: write down the manual steps and who performs them.');
    return { action_id: ids[a], provider_id: chosen[a], instruction: parts.join(' ') };
  });
  const seeds: Out['memory_plan']['seeds'] = [];
  hints.forEach((h, a) => {
    if (seeds.length >= 20) return;
    if (chosen[a] && canStore('provider_preference'))
      seeds.push({
        kind: 'provider_preference',
        action_id: ids[a],
        content: minimize ? `route ${ids[a]} via ${chosen[a]}` : `For "${h.title}" use ${chosen[a]}.`,
      });
    if (recordOutcome && canStore('outcome'))
      seeds.push({
        kind: 'outcome',
        action_id: ids[a],
        content: `Record the result of ${minimize ? ids[a] : `"${h.title}"`} after the caller executes it.`,
      });
  });
  const events = [
    'plan_created',
    ...(gated.length ? ['approval_requested', 'approval_decided'] : []),
    'dry_run_completed',
    'action_executed_by_caller',
    ...(recordOutcome ? ['outcome_recorded'] : []),
  ];

  return {
    surface: ctx.surface ?? input.surface ?? null,
    intent: input.intent,
    risk_tolerance: risk,
    ranked_action_candidates: ranked,
    recommended_provider_route: route,
    approval_gate: {
      required: gated.length > 0,
      owner: policy.approval_owner ?? null,
      gated_actions: gated,
      autonomous_actions: autonomousIds,
    },
    policy_labels: labels,
    audit_plan: { events, records },
    dry_run_instructions: dry,
    memory_plan: {
      minimize_context: minimize,
      record_outcome: recordOutcome,
      store_kinds: storeKinds,
      never_store: [...(mem.prohibited_memory_kinds ?? [])],
      seeds,
    },
    integration_hints: [
      {
        kind: 'approval',
        target: policy.approval_owner ?? 'approval inbox',
        detail: `${gated.length} action(s) wait for approval before the caller executes them.`,
      },
      {
        kind: 'execution',
        target: 'recommended_provider_route',
        detail:
          'The caller executes each step with its own credentials, falling back to fallback_provider_id on failure.',
      },
      {
        kind: 'audit',
        target: 'audit_plan',
        detail: `Log ${events.length} event kinds per run; redact listed inputs.`,
      },
      {
        kind: 'memory',
        target: 'memory_plan',
        detail: minimize
          ? 'Keep ids only; do not retain context.'
          : `Store only: ${storeKinds.join(', ') || 'nothing'}.`,
      },
    ],
  };
}

export const actionsPlan = defineReasoning({
  path: '/actions/plan',
  summary: 'Rank action/provider candidates and gate effects per approval policy (plans only)',
  request: actionsPlanRequest,
  response: actionsPlanResponse,
  compile: planActions,
  example: {
    surface: 'crm',
    intent: 'Collect the overdue invoice from Acme and tell them',
    risk_tolerance: 'medium',
    constraints: ['never use legacybill'],
    action_hints: [
      { id: 'lookup', title: 'Look up invoice status', tool: 'invoices.read', inputs: ['invoice_id'] },
      {
        id: 'charge',
        title: 'Charge the card on file',
        tool: 'payments',
        inputs: ['invoice_id', 'card_token'],
        external: true,
      },
      {
        id: 'notify',
        title: 'Email the customer a receipt',
        tool: 'email',
        inputs: ['customer_email'],
        external: true,
      },
    ],
    available_providers: [
      { id: 'erp', name: 'ERP', capabilities: ['invoices.read'], reliability: 0.99, cost: 1, read_only: true },
      { id: 'stripe', name: 'Stripe', capabilities: ['payments'], reliability: 0.98, cost: 3 },
      { id: 'legacybill', name: 'LegacyBill', capabilities: ['payments'], reliability: 0.9, cost: 1 },
      { id: 'mailer', name: 'Mailer', capabilities: ['email'], reliability: 0.95, cost: 0.5 },
      {
        id: 'smtp-backup',
        name: 'SMTP backup',
        capabilities: ['email'],
        reliability: 0.8,
        cost: 0.1,
        available: false,
      },
    ],
    approval_policy: {
      require_for_money: true,
      require_for_customer_touch: true,
      allowed_autonomous_effects: ['read'],
      approval_owner: 'finance lead',
    },
    memory_policy: { minimize_context: false, prohibited_memory_kinds: ['payment_details'], record_outcome: true },
  },
});

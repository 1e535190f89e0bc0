import { defineReasoning } from './types';
import {
  contextualActionPlanRequest,
  contextualActionPlanResponse,
  type ContextualActionPlanRequest,
  type ContextualActionPlanResponse,
} from '../schema/reasoning/contextual-action-plan';
import { keywordSet, keywordSetEach } from './lib/text-segments';
import { parseInstant } from './lib/luxon-time';

type Out = ContextualActionPlanResponse;
const round = (x: number) => Math.round(x * 1000) / 1000;
const norm = (s: string) => s.toLowerCase().trim();
const W = { app_match: 0.3, selection_fit: 0.25, keyword_match: 0.25, recency: 0.1, safety: 0.1 };

/**
 * Rank candidate actions for the user's current context: app and selection fit, keyword overlap
 * with the selection, window and the latest events (through a word → event index), recency of
 * the matching event, and safety. Actions bound to other apps are suppressed; approvals follow
 * the policy for destructive, external and non-allowed effects.
 */
export function planContextualActions(input: ContextualActionPlanRequest, ctx: { surface?: string }): Out {
  const maxActions = input.preferences?.max_actions ?? 5;
  const windowSize = input.preferences?.recent_window ?? 50;
  const c = input.context;
  const app = c.app ? norm(c.app) : null;
  const kind = c.selection_kind ? norm(c.selection_kind) : null;

  // Latest events first: by time when every event in play has one, else by position.
  const events = (input.recent_events ?? []).map((e, i) => ({ e, i, t: parseInstant(e.time)?.toMillis() ?? null }));
  const timed = events.every((x) => x.t !== null);
  events.sort((x, y) => (timed && x.t !== y.t ? y.t! - x.t! : y.i - x.i));
  const window = events.slice(0, windowSize);
  const eventsByWord = new Map<string, number[]>();
  window.forEach((x, rank) => {
    for (const w of keywordSet(`${x.e.title ?? ''} ${x.e.summary ?? ''} ${x.e.kind}`)) {
      const l = eventsByWord.get(w) ?? [];
      l.push(rank);
      eventsByWord.set(w, l);
    }
  });
  const contextWords = new Set(
    keywordSet(`${c.selection ?? ''} ${c.window_title ?? ''} ${c.url ?? ''} ${input.intent ?? ''}`),
  );
  const policy = input.approval_policy ?? {};
  const auto = new Set((policy.auto_allowed_effects ?? []).map(norm));

  const factorNames = Object.keys(W) as (keyof typeof W)[];
  // Keyword lists repeat across actions; segment each distinct keyword once per call.
  const keywordCache = new Map<string, string[]>();
  const keywordsOf = (k: string) => {
    let ws = keywordCache.get(k);
    if (!ws) keywordCache.set(k, (ws = keywordSet(k)));
    return ws;
  };

  type Action = ContextualActionPlanRequest['candidate_actions'][number];
  /** Suppression reason, or the plain factor values and score of an action. */
  const assess = (a: Action, titleWords?: string[]) => {
    const apps = (a.apps ?? []).map(norm);
    if (apps.length && app && !apps.includes(app)) return `applies in ${a.apps!.join(', ')}, not ${c.app}`;
    const kinds = (a.selection_kinds ?? []).map(norm);
    if (kinds.length && !kind) return `needs a ${a.selection_kinds!.join('/')} selection`;
    const words = [...new Set([...(a.keywords ?? []).flatMap(keywordsOf), ...(titleWords ?? keywordSet(a.title))])];
    const inContext = words.filter((w) => contextWords.has(w));
    const inEvents = words.filter((w) => eventsByWord.has(w));
    const matched = new Set([...inContext, ...inEvents]).size;
    const latest = inEvents.reduce((m, w) => Math.min(m, eventsByWord.get(w)![0]), Infinity);
    const values = {
      app_match: apps.length ? (app ? 1 : 0.5) : 0.5,
      selection_fit: kinds.length ? (kinds.includes(kind!) ? 1 : 0) : 0.5,
      keyword_match: words.length ? Math.min(1, matched / Math.min(words.length, 3)) : 0,
      recency: Number.isFinite(latest) ? 1 - latest / Math.max(1, window.length) : 0,
      safety: a.destructive ? 0 : a.reversible === false ? 0.3 : a.external ? 0.6 : 1,
    };
    let sum = 0;
    for (const name of factorNames) sum += W[name] * round(values[name]);
    return { values, score: round(sum), inContext, inEvents };
  };

  // Pass 1 keeps only a score per action (and the first suppression notes); the factor, reason,
  // approval and evidence objects are built for the returned actions only, so 10,000
  // candidates do not keep 10,000 result objects alive.
  const suppressed: Out['suppressed'] = [];
  let suppressedCount = 0;
  const kept: number[] = [];
  const scores: number[] = [];
  // Titles are segmented in chunks, one segmenter pass per chunk.
  const actions = input.candidate_actions;
  for (let from = 0; from < actions.length; from += 256) {
    const chunk = actions.slice(from, from + 256);
    const titleWords = keywordSetEach(chunk.map((a) => a.title));
    chunk.forEach((a, k) => {
      const r = assess(a, titleWords[k]);
      if (typeof r === 'string') {
        suppressedCount++;
        if (suppressed.length < 50) suppressed.push({ action_id: a.id, reason: r });
        return;
      }
      kept.push(from + k);
      scores.push(r.score);
    });
  }

  const describe = (a: Action, rank: number): Out['ranked_actions'][number] => {
    const { values, score, inContext, inEvents } = assess(a) as Exclude<ReturnType<typeof assess>, string>;
    const evidence = [...new Set(inEvents.flatMap((w) => eventsByWord.get(w)!.slice(0, 3)))]
      .sort((x, y) => x - y)
      .slice(0, 5)
      .map((r) => window[r].e.id);
    const factors = factorNames.map((name) => ({ name, weight: W[name], value: round(values[name]) }));
    const reasons: string[] = [];
    if (values.app_match === 1) reasons.push(`made for ${c.app}`);
    if (values.selection_fit === 1) reasons.push(`fits the selected ${c.selection_kind}`);
    if (inContext.length) reasons.push(`selection/window mentions ${inContext.slice(0, 3).join(', ')}`);
    if (evidence.length) reasons.push(`recent activity mentions ${inEvents.slice(0, 3).join(', ')}`);
    if (!reasons.length) reasons.push('generic action; no direct context signal');
    const approvals: string[] = [];
    if (a.destructive && (policy.require_for_destructive ?? true)) approvals.push('destructive');
    if (a.external && (policy.require_for_external ?? true)) approvals.push('external');
    if (a.requires_approval) approvals.push('action_requires_approval');
    for (const e of a.effects ?? [])
      if (norm(e) !== 'read' && !auto.has(norm(e)) && !approvals.includes(`effect:${norm(e)}`))
        approvals.push(`effect:${norm(e)}`);
    return {
      rank,
      action_id: a.id,
      title: a.title,
      score,
      factors,
      reasons,
      required_approvals: approvals,
      evidence_event_ids: evidence,
    };
  };
  const order = kept.map((_, k) => k).sort((x, y) => scores[y] - scores[x] || x - y);
  const top = order.slice(0, maxActions).map((k, r) => describe(actions[kept[k]], r + 1));

  const kindCounts = new Map<string, number>();
  for (const x of window) kindCounts.set(x.e.kind, (kindCounts.get(x.e.kind) ?? 0) + 1);
  return {
    surface: ctx.surface ?? input.surface ?? null,
    ranked_actions: top,
    suppressed,
    suppressed_count: suppressedCount,
    context_summary: {
      app: c.app ?? null,
      selection_kind: c.selection_kind ?? null,
      context_words: [...contextWords].slice(0, 20),
      recent_event_kinds: [...kindCounts]
        .map(([k, count]) => ({ kind: k, count }))
        .sort((x, y) => y.count - x.count || (x.kind < y.kind ? -1 : x.kind > y.kind ? 1 : 0)),
      window_size: window.length,
    },
    integration_hints: [
      {
        kind: 'ui',
        target: 'ranked_actions',
        detail: `Show the top ${top.length} action(s) inline where the user is${c.app ? ` (${c.app})` : ''}.`,
      },
      {
        kind: 'approval',
        target: 'required_approvals',
        detail: 'Ask before running any action with required approvals; the service runs nothing.',
      },
    ],
  };
}

export const contextualActionPlan = defineReasoning({
  path: '/contextual-action/plan',
  summary: 'Rank contextual actions for the current app, selection and recent events, with reasons and approvals',
  request: contextualActionPlanRequest,
  response: contextualActionPlanResponse,
  compile: planContextualActions,
  example: {
    surface: 'desktop',
    context: {
      app: 'mail',
      selection: 'Can we meet Thursday at 3pm to review the Q3 invoice?',
      selection_kind: 'text',
      window_title: 'Re: Q3 invoice – Acme',
    },
    recent_events: [
      { id: 'e1', kind: 'email_received', title: 'Q3 invoice from Acme', app: 'mail', time: '2026-05-04T08:55:00Z' },
      {
        id: 'e2',
        kind: 'calendar_viewed',
        title: 'Thursday meeting slots',
        app: 'calendar',
        time: '2026-05-04T08:58:00Z',
      },
      { id: 'e3', kind: 'file_opened', title: 'invoices.xlsx', app: 'sheets', time: '2026-05-04T08:40:00Z' },
    ],
    candidate_actions: [
      {
        id: 'schedule',
        title: 'Propose meeting time',
        apps: ['mail', 'calendar'],
        selection_kinds: ['text', 'date'],
        keywords: ['meet', 'meeting', 'thursday'],
        external: true,
        effects: ['calendar_write'],
      },
      {
        id: 'pay',
        title: 'Pay invoice',
        apps: ['mail', 'banking'],
        keywords: ['invoice', 'pay'],
        external: true,
        reversible: false,
        effects: ['money'],
      },
      {
        id: 'summarize',
        title: 'Summarize thread',
        apps: ['mail'],
        keywords: ['thread', 'summary'],
        effects: ['read'],
      },
      { id: 'format', title: 'Format code block', apps: ['editor'], selection_kinds: ['code'] },
      { id: 'delete', title: 'Delete thread', apps: ['mail'], destructive: true },
    ],
    approval_policy: { auto_allowed_effects: ['read'] },
    preferences: { max_actions: 3 },
  },
});

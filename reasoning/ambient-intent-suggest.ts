import { defineReasoning } from './types';
import {
  ambientIntentSuggestRequest,
  ambientIntentSuggestResponse,
  type AmbientIntentSuggestRequest as Req,
  type AmbientIntentSuggestResponse as Res,
} from '../schema/reasoning/ambient-intent-suggest';
import { isoOut, parseInstant, resolveZone } from './lib/luxon-time';
import { keywordSet, keywordSetEach, splitWordsEach } from './lib/text-segments';

const HOUR = 3_600_000;
const INTENT = {
  overdue: 'reschedule',
  commitment: 'prepare',
  open_loop: 'close_loop',
  paused: 'resume',
  active: 'continue',
} as const;
const STATE_FACTOR = { overdue: 1, commitment: 0.8, open_loop: 0.7, paused: 0.6, active: 0.5 } as const;
const W = { state: 0.25, weight: 0.15, recency: 0.1, urgency: 0.2, signal_match: 0.2, goal_alignment: 0.1 };
const r3 = (x: number) => Math.round(x * 1000) / 1000;
const PER_KEY = 20; // signals looked at per index key: keeps matching O(candidates + signals)

export function compileAmbientIntentSuggest(input: Req, ctx: { surface?: string } = {}): Res {
  const sc = input.suggestion_context;
  const tz = resolveZone(input.timezone);
  const clock = parseInstant(input.now, tz) ?? parseInstant(sc.now, tz);
  const ref = clock?.toMillis() ?? null;
  const prefs = input.preferences ?? {};
  const max = prefs.max_suggestions ?? 3;
  const minScore = prefs.min_score ?? 0.2;
  const cooldownMin = prefs.cooldown_minutes ?? 90;

  // Index signals by item id, project and words so each candidate only looks at related signals.
  const signals = (input.signals ?? []).map((s, i) => ({ ...s, sid: s.id ?? `s${i}`, strength: s.strength ?? 0.5 }));
  const byItem = new Map<string, number[]>();
  const byProject = new Map<string, number[]>();
  const byWord = new Map<string, number[]>();
  const push = (m: Map<string, number[]>, k: string, i: number) => {
    const l = m.get(k) ?? [];
    if (l.length < PER_KEY && l[l.length - 1] !== i) l.push(i);
    m.set(k, l);
  };
  let lowEnergy = false;
  const dismissed = new Map<string, string>();
  // Words of all signals and candidates from one segmenter pass per batch (a segment() call per
  // item made long lists GC-bound).
  const signalWords = keywordSetEach(signals.map((s) => `${s.value ?? ''} ${(s.tags ?? []).join(' ')}`));
  const candidateWords = keywordSetEach(sc.candidates.map((c) => `${c.title} ${(c.signals ?? []).join(' ')}`));
  const titleWords = splitWordsEach(sc.candidates.map((c) => c.title));
  signals.forEach((s, i) => {
    if (s.item_id) push(byItem, s.item_id, i);
    if (s.project) push(byProject, s.project.toLowerCase(), i);
    for (const w of signalWords[i].slice(0, 12)) push(byWord, w, i);
    if (/energy/i.test(s.kind) && /\b(low|tired|drained)\b/i.test(s.value ?? '')) lowEnergy = true;
    if (/dismiss|snooze|reject/i.test(s.kind) && s.item_id) dismissed.set(s.item_id, s.sid);
  });

  const cooldown = new Map<string, { until: string; reason: string }>();
  for (const c of sc.cooldowns ?? []) {
    const u = parseInstant(c.until, tz);
    if (!u || ref === null || u.toMillis() > ref)
      cooldown.set(c.key, { until: c.until, reason: c.reason ?? 'cooldown' });
  }
  const goalWords = new Set(keywordSet(sc.active_goal ?? ''));
  const activeProject = (sc.active_project ?? '').toLowerCase();

  const suppressed: Res['suppressed'] = [];
  const scored: (Res['suggestions'][number] & { idx: number })[] = [];
  const seen = new Set<string>();
  sc.candidates.forEach((c, idx) => {
    if (seen.has(c.id) || c.state === 'done') return;
    seen.add(c.id);
    const cd = cooldown.get(c.id);
    if (cd) return void suppressed.push({ candidate_id: c.id, reason: `cooldown: ${cd.reason}`, until: cd.until });
    if (dismissed.has(c.id))
      return void suppressed.push({
        candidate_id: c.id,
        reason: `dismissed by signal ${dismissed.get(c.id)}`,
        until: null,
      });
    if (prefs.quiet && c.state !== 'commitment' && c.state !== 'overdue')
      return void suppressed.push({ candidate_id: c.id, reason: 'quiet mode', until: null });
    const state = c.state as keyof typeof INTENT;
    const reasons: string[] = [];
    const last = parseInstant(c.last_seen, tz);
    const recency = last && ref !== null ? Math.exp(-Math.max(0, ref - last.toMillis()) / (48 * HOUR)) : 0.3;
    const due = parseInstant(c.due, tz);
    let urgency = 0;
    if (due && ref !== null) {
      const h = (due.toMillis() - ref) / HOUR;
      urgency = h < 0 ? 1 : h < 2 ? 0.9 : h < 24 ? 0.6 : h < 72 ? 0.3 : 0.1;
      reasons.push(h < 0 ? `overdue since ${isoOut(due)}` : `due in ${Math.round(h * 10) / 10} h`);
    } else if (due) urgency = 0.3;
    // Signals: direct item mentions count fully, same project 0.6, shared words 0.4 (each times strength).
    const evidence = new Map<number, number>();
    const add = (list: number[] | undefined, f: number) =>
      list?.forEach((i) => evidence.set(i, Math.max(evidence.get(i) ?? 0, f * signals[i].strength)));
    add(byItem.get(c.id), 1);
    if (c.project) add(byProject.get(c.project.toLowerCase()), 0.6);
    for (const w of candidateWords[idx].slice(0, 10)) add(byWord.get(w), 0.4);
    let signalMatch = 0;
    for (const v of evidence.values()) signalMatch += v;
    signalMatch = Math.min(1, signalMatch);
    const ev = [...evidence.entries()]
      .sort((a, b) => b[1] - a[1] || a[0] - b[0])
      .slice(0, 5)
      .map(([i]) => signals[i].sid);
    if (ev.length) reasons.push(`matches ${ev.length} current signal(s)`);
    let goal = c.project && activeProject && c.project.toLowerCase() === activeProject ? 1 : 0;
    if (!goal && goalWords.size) {
      const tw = titleWords[idx].filter((w) => goalWords.has(w)).length;
      goal = Math.min(1, tw / goalWords.size);
    }
    if (goal >= 1) reasons.push('in the active project');
    else if (goal > 0) reasons.push('related to the active goal');
    let stateF: number = STATE_FACTOR[state];
    if (lowEnergy && (state === 'active' || state === 'paused')) {
      stateF *= 0.8;
      reasons.push('energy is low: deep work ranked down');
    }
    const weight = c.weight ?? 0.5;
    const factors = {
      state: r3(stateF),
      weight: r3(weight),
      recency: r3(recency),
      urgency: r3(urgency),
      signal_match: r3(signalMatch),
      goal_alignment: r3(goal),
    };
    const score = r3(
      W.state * stateF +
        W.weight * weight +
        W.recency * recency +
        W.urgency * urgency +
        W.signal_match * signalMatch +
        W.goal_alignment * goal,
    );
    reasons.unshift(`${c.state.replace('_', ' ')} item`);
    if (score < minScore)
      return void suppressed.push({ candidate_id: c.id, reason: `score ${score} below ${minScore}`, until: null });
    scored.push({
      id: '',
      idx,
      intent: INTENT[state],
      candidate_id: c.id,
      title: c.title,
      score,
      factors,
      reasons,
      evidence_signal_ids: ev,
      cooldown_key: c.id,
    });
  });
  scored.sort((a, b) => b.score - a.score || a.idx - b.idx);
  const suggestions = scored.slice(0, max).map(({ idx: _i, ...s }, k) => ({ ...s, id: `sg${k + 1}` }));
  for (const s of scored.slice(max))
    suppressed.push({ candidate_id: s.candidate_id, reason: `ranked below max_suggestions (${max})`, until: null });
  const next_cooldowns = suggestions.map((s) => ({
    key: s.cooldown_key,
    until: clock ? isoOut(clock.plus({ minutes: cooldownMin })) : null,
    reason: `suggested (${s.intent})`,
  }));
  const target = input.surface ?? ctx.surface ?? sc.surface ?? 'ambient';
  return {
    suggestions,
    suppressed: suppressed.slice(0, 100),
    next_cooldowns,
    summary: {
      considered: seen.size,
      suggested: suggestions.length,
      suppressed: suppressed.length,
      clock: clock ? isoOut(clock) : null,
    },
    integration_hints: [
      {
        kind: 'render',
        target,
        detail: 'Show suggestions as dismissible chips; send a "dismiss" signal with item_id when the user declines.',
      },
      {
        kind: 'cooldown',
        target: '/v1/ambient/continuity/compile',
        detail: 'Store next_cooldowns in previous_ledger.cooldowns so the next compile carries them.',
      },
    ],
  };
}

export const ambientIntentSuggest = defineReasoning({
  path: '/ambient/intent/suggest',
  summary:
    'Rank ambient intent suggestions (resume, close loop, prepare, reschedule, continue) from a continuity suggestion_context and current signals, respecting cooldowns.',
  request: ambientIntentSuggestRequest,
  response: ambientIntentSuggestResponse,
  compile: compileAmbientIntentSuggest,
  example: {
    surface: 'desktop',
    now: '2026-04-27T16:05:00Z',
    suggestion_context: {
      surface: 'desktop',
      active_goal: 'Ship billing v2',
      active_project: 'billing',
      now: '2026-04-27T16:00:00Z',
      candidates: [
        { id: 'w3', title: 'Renew domain', state: 'overdue', due: '2026-04-26T23:59:00Z', weight: 0.8 },
        { id: 'b1', title: 'Write API spec', state: 'commitment', due: '2026-04-27T17:00:00Z', weight: 0.8 },
        {
          id: 'w1',
          kind: 'doc',
          title: 'Billing API spec',
          project: 'billing',
          state: 'active',
          last_seen: '2026-04-27T15:40:00Z',
          weight: 0.93,
        },
        {
          id: 'e2',
          kind: 'message',
          title: 'Pricing question from Ana',
          project: 'billing',
          state: 'open_loop',
          last_seen: '2026-04-27T14:00:00Z',
          weight: 0.76,
          signals: ['question'],
        },
        {
          id: 'e3',
          kind: 'edit',
          title: 'Migration runbook',
          project: 'billing',
          state: 'paused',
          last_seen: '2026-04-24T10:00:00Z',
          weight: 0.36,
        },
      ],
      cooldowns: [{ key: 'w1', until: '2026-04-27T17:10:00Z', reason: 'worked on heavily just now' }],
    },
    signals: [
      { id: 'sig-1', kind: 'app_open', value: 'chat pricing thread', strength: 0.9, project: 'billing' },
      { id: 'sig-2', kind: 'calendar_gap', value: '45 minutes free', strength: 0.6 },
    ],
    preferences: { max_suggestions: 3 },
  },
});

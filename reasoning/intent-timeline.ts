import type { DateTime } from 'luxon';
import { defineReasoning } from './types';
import {
  intentTimelineRequest,
  intentTimelineResponse,
  type IntentTimelineRequest as Req,
  type IntentTimelineResponse as Res,
} from '../schema/reasoning/intent-timeline';
import { isoOut, parseInstant, resolveZone } from './lib/luxon-time';
import { splitWordsEach } from './lib/text-segments';

/** Verb lexicon for events that carry no intent label (a Map: a word such as `__proto__` finds nothing). */
const LEXICON = new Map<string, string>();
for (const [intent, words] of Object.entries({
  research: 'search find look compare research browse explore investigate google lookup',
  create: 'write draft create design build compose sketch code implement edit',
  fix: 'fix debug error bug repair crash broken patch',
  plan: 'plan schedule organize prioritize calendar roadmap estimate',
  communicate: 'email reply message call chat ask meet slack send',
  purchase: 'buy pay checkout order cart purchase subscribe',
  review: 'review check approve read proofread verify test',
  learn: 'learn study practice course tutorial lesson',
}))
  for (const w of words.split(' ')) LEXICON.set(w, intent);

const norm = (s: string) =>
  s
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');
const r2 = (x: number) => Math.round(x * 100) / 100;

function inferIntent(words: readonly string[]): string | null {
  for (const w of words) {
    const hit = LEXICON.get(w) ?? LEXICON.get(w.replace(/(ing|ed|es|s)$/, ''));
    if (hit) return hit;
  }
  return null;
}

export function compileIntentTimeline(input: Req, _ctx: { surface?: string } = {}): Res {
  const tz = resolveZone(input.timezone);
  const prefs = input.preferences ?? {};
  const gap = (prefs.gap_minutes ?? 30) * 60_000;
  const tail = prefs.tail_minutes ?? 5;
  const unplaced: string[] = [];
  const evs: {
    i: number;
    id: string;
    t: DateTime;
    ms: number;
    intent: string;
    inferred: boolean;
    surface?: string;
    conf: number;
  }[] = [];
  // Words of the unlabelled events, from one segmenter pass.
  const words = splitWordsEach(input.events.map((e) => (e.intent?.trim() ? '' : (e.text ?? ''))));
  input.events.forEach((e, i) => {
    const t = parseInstant(e.time, tz);
    if (!t) return void unplaced.push(e.id);
    const label = e.intent?.trim() ? norm(e.intent) : null;
    const inferred = label ? null : inferIntent(words[i]);
    evs.push({
      i,
      id: e.id,
      t,
      ms: t.toMillis(),
      intent: label ?? inferred ?? 'unknown',
      inferred: !label,
      surface: e.surface,
      conf: e.confidence ?? (label ? 0.9 : inferred ? 0.6 : 0.2),
    });
  });
  evs.sort((a, b) => a.ms - b.ms || a.i - b.i);

  // Phases: runs of one intent without a silence longer than gap_minutes.
  type Phase = {
    intent: string;
    first: (typeof evs)[number];
    last: (typeof evs)[number];
    ids: string[];
    n: number;
    surfaces: Set<string>;
    conf: number;
    inferred: number;
  };
  const phases: Phase[] = [];
  for (const e of evs) {
    const p = phases[phases.length - 1];
    if (p && p.intent === e.intent && e.ms - p.last.ms <= gap) {
      p.last = e;
      p.n++;
      if (p.ids.length < 20) p.ids.push(e.id);
      if (e.surface && p.surfaces.size < 10) p.surfaces.add(e.surface);
      p.conf += e.conf;
      p.inferred += e.inferred ? 1 : 0;
    } else
      phases.push({
        intent: e.intent,
        first: e,
        last: e,
        ids: [e.id],
        n: 1,
        surfaces: new Set(e.surface ? [e.surface] : []),
        conf: e.conf,
        inferred: e.inferred ? 1 : 0,
      });
  }
  const dwell = (p: Phase) => r2(p.last.t.diff(p.first.t, 'minutes').minutes + tail);
  const total = phases.reduce((a, p) => a + dwell(p), 0);
  const byIntent = new Map<string, { minutes: number; phases: number }>();
  for (const p of phases) {
    const x = byIntent.get(p.intent) ?? { minutes: 0, phases: 0 };
    x.minutes += dwell(p);
    x.phases++;
    byIntent.set(p.intent, x);
  }
  const dwell_by_intent = [...byIntent.entries()]
    .map(([intent, x]) => ({
      intent,
      minutes: r2(x.minutes),
      share: total ? r2(x.minutes / total) : 0,
      phases: x.phases,
    }))
    .sort((a, b) => b.minutes - a.minutes || (a.intent < b.intent ? -1 : 1));

  const max = prefs.max_phases ?? 20;
  const offset = Math.max(0, phases.length - max);
  const kept = phases.slice(offset);
  const pid = (k: number) => `ph${offset + k + 1}`;
  const outPhases = kept.map((p, k) => ({
    id: pid(k),
    intent: p.intent,
    start: isoOut(p.first.t),
    end: isoOut(p.last.t),
    dwell_minutes: dwell(p),
    event_count: p.n,
    event_ids: p.ids,
    surfaces: [...p.surfaces],
    confidence: r2(p.conf / p.n),
    inferred_share: r2(p.inferred / p.n),
  }));
  const seenIntents = new Set(phases.slice(0, offset + 1).map((p) => p.intent));
  const transitions: Res['transitions'] = [];
  for (let k = 1; k < kept.length; k++) {
    const a = kept[k - 1];
    const b = kept[k];
    const kind = a.intent === b.intent ? 'gap_resume' : seenIntents.has(b.intent) ? 'return' : 'switch';
    seenIntents.add(b.intent);
    transitions.push({
      from_phase: pid(k - 1),
      to_phase: pid(k),
      from_intent: a.intent,
      to_intent: b.intent,
      gap_minutes: r2(b.first.t.diff(a.last.t, 'minutes').minutes),
      kind,
    });
  }

  // Drift: share of dwell on the goal intent, and whether the second half of the span is closer to it.
  const goal = input.goal_intent?.trim() ? norm(input.goal_intent) : (dwell_by_intent[0]?.intent ?? null);
  const basis = input.goal_intent?.trim() ? 'given' : goal ? 'dominant' : 'none';
  const onGoal = goal ? (byIntent.get(goal)?.minutes ?? 0) : 0;
  let trend: Res['drift']['trend'] = 'unknown';
  if (goal && phases.length >= 2) {
    const mid = (evs[0].ms + evs[evs.length - 1].ms) / 2;
    const share = (ps: Phase[]) => {
      const all = ps.reduce((a, p) => a + dwell(p), 0);
      return all ? ps.filter((p) => p.intent === goal).reduce((a, p) => a + dwell(p), 0) / all : 0;
    };
    const early = share(phases.filter((p) => p.first.ms < mid));
    const late = share(phases.filter((p) => p.first.ms >= mid));
    trend = late - early > 0.15 ? 'converging' : early - late > 0.15 ? 'drifting' : 'stable';
  }
  const spanMin = evs.length ? evs[evs.length - 1].t.diff(evs[0].t, 'minutes').minutes + tail : 0;
  const switches = phases.length - 1 - phases.slice(1).filter((p, k) => p.intent === phases[k].intent).length;
  const off = outPhases
    .filter((p) => p.intent !== goal)
    .sort((a, b) => b.dwell_minutes - a.dwell_minutes || (a.id < b.id ? -1 : 1))
    .slice(0, 5)
    .map((p) => p.id);
  return {
    phases: outPhases,
    transitions,
    dwell_by_intent: dwell_by_intent.slice(0, 50),
    drift: {
      goal_intent: goal,
      basis,
      on_goal_share: total ? r2(onGoal / total) : 0,
      drift_score: total && goal ? r2(1 - onGoal / total) : 0,
      trend,
      fragmentation_per_hour: spanMin > 0 ? r2(Math.max(0, switches) / (spanMin / 60)) : 0,
      off_goal_phase_ids: off,
    },
    unplaced_event_ids: unplaced.slice(0, 50),
    summary: {
      events: evs.length,
      phases_total: phases.length,
      start: evs.length ? isoOut(evs[0].t) : null,
      end: evs.length ? isoOut(evs[evs.length - 1].t) : null,
      span_minutes: r2(spanMin),
    },
    integration_hints: [
      {
        kind: 'analytics',
        target: 'timeline_view',
        detail: 'Render phases as bands and transitions as markers; colour off_goal_phase_ids.',
      },
      {
        kind: 'nudge',
        target: '/v1/ambient/intent/suggest',
        detail: 'When drift.trend is "drifting", pass the goal intent as an active_goal signal.',
      },
    ],
  };
}

export const intentTimeline = defineReasoning({
  path: '/intent/timeline',
  summary: 'Order events into intent phases with transitions, dwell times per intent and drift from a goal intent.',
  request: intentTimelineRequest,
  response: intentTimelineResponse,
  compile: compileIntentTimeline,
  example: {
    surface: 'browser',
    goal_intent: 'create',
    timezone: 'Europe/Paris',
    events: [
      { id: 'e1', time: '2026-04-27T09:00:00+02:00', text: 'Draft the onboarding email', surface: 'docs' },
      { id: 'e2', time: '2026-04-27T09:20:00+02:00', intent: 'create', text: 'Edit subject line', surface: 'docs' },
      { id: 'e3', time: '2026-04-27T09:35:00+02:00', text: 'Search competitor onboarding emails', surface: 'browser' },
      { id: 'e4', time: '2026-04-27T09:50:00+02:00', text: 'Compare three examples', surface: 'browser' },
      { id: 'e5', time: '2026-04-27T10:05:00+02:00', text: 'Reply to Slack thread', surface: 'slack' },
      { id: 'e6', time: '2026-04-27T10:15:00+02:00', text: 'Write the second paragraph', surface: 'docs' },
      { id: 'e7', time: '2026-04-27T11:30:00+02:00', text: 'Write call to action', surface: 'docs' },
      { id: 'e8', time: 'yesterday-ish', text: 'unknown' },
    ],
  },
});

import { defineReasoning } from './types';
import {
  signalsOpportunitiesRequest,
  signalsOpportunitiesResponse,
  type SignalsOpportunitiesRequest as Req,
  type SignalsOpportunitiesResponse as Res,
} from '../schema/reasoning/signals-opportunities';
import { isoOut, parseInstant, resolveZone } from './lib/luxon-time';
import { keywordSet, keywordSetEach, slug } from './lib/text-segments';

const HOUR = 3_600_000;
const MOVES: [RegExp, string][] = [
  [/request|idea|wish|feature/, 'scope a small experiment that answers the request'],
  [/complain|bug|issue|incident|error|churn/, 'triage and fix the root cause; reply to the affected accounts'],
  [/lead|mention|intent|pricing|trial|demo/, 'reach out while interest is warm'],
  [/usage|spike|growth|adoption/, 'double down: package the behaviour that drives usage'],
];
const r3 = (x: number) => Math.round(x * 1000) / 1000;

export function compileSignalsOpportunities(input: Req, _ctx: { surface?: string } = {}): Res {
  const tz = resolveZone(input.timezone);
  const prefs = input.preferences ?? {};
  const minSignals = prefs.min_signals ?? 2;
  const halfLife = (prefs.half_life_hours ?? 72) * HOUR;
  const textWords = keywordSetEach(input.signals.map((s) => s.text ?? '')); // one segmenter pass
  const sigs = input.signals.map((s, i) => {
    const t = parseInstant(s.time, tz);
    // Tags count as terms as they are; text contributes at most 8 content words.
    const terms = [
      ...new Set([...(s.tags ?? []).map((x) => x.trim().toLowerCase()).filter(Boolean), ...textWords[i].slice(0, 8)]),
    ].slice(0, 16);
    return { s, i, t, ms: t?.toMillis() ?? null, terms, strength: s.strength ?? 0.5 };
  });
  let clock = parseInstant(input.now, tz);
  if (!clock) for (const x of sigs) if (x.t && (!clock || x.t > clock)) clock = x.t;
  const ref = clock?.toMillis() ?? null;

  // Anchor each signal on its most shared term that is not ubiquitous, so clusters stay distinct.
  const df = new Map<string, number>();
  for (const x of sigs) for (const w of x.terms) df.set(w, (df.get(w) ?? 0) + 1);
  const ceiling = Math.max(minSignals, Math.floor(sigs.length * 0.5));
  const clusters = new Map<string, typeof sigs>();
  const unclustered: string[] = [];
  for (const x of sigs) {
    let best: string | null = null;
    for (const w of x.terms) {
      const d = df.get(w)!;
      if (d < minSignals || d > ceiling) continue;
      if (best === null || d > df.get(best)! || (d === df.get(best)! && w < best)) best = w;
    }
    if (best === null) unclustered.push(x.s.id);
    else (clusters.get(best) ?? clusters.set(best, []).get(best)!).push(x);
  }
  // A cluster can fall below min_signals if its members anchored elsewhere: those go unclustered.
  const maxCount = Math.max(1, ...[...clusters.values()].map((c) => c.length));
  const focusWords = new Set(keywordSet(input.focus ?? ''));
  const scored: (Res['opportunities'][number] & { anchor: string })[] = [];
  for (const [anchor, members] of clusters) {
    if (members.length < minSignals) {
      members.forEach((m) => unclustered.push(m.s.id));
      continue;
    }
    const co = new Map<string, number>();
    for (const m of members) for (const w of m.terms) if (w !== anchor) co.set(w, (co.get(w) ?? 0) + 1);
    const related = [...co.entries()]
      .filter(([, c]) => c >= 2)
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, 4)
      .map(([w]) => w);
    const terms = [anchor, ...related];
    const frequency = Math.log2(1 + members.length) / Math.log2(1 + maxCount);
    const decay = (ms: number | null) =>
      ms === null || ref === null ? 0.5 : Math.pow(0.5, Math.max(0, ref - ms) / halfLife);
    const recency = members.reduce((a, m) => a + decay(m.ms), 0) / members.length;
    const strength = members.reduce((a, m) => a + m.strength, 0) / members.length;
    const sources = new Set(members.map((m) => m.s.source ?? m.s.kind ?? '?'));
    const entities = [...new Set(members.map((m) => m.s.entity).filter((e): e is string => !!e))];
    const diversity = Math.min(1, (sources.size - 1) / 3 + Math.min(1, entities.length / 5) / 2);
    const focus = focusWords.size
      ? terms.filter((w) => focusWords.has(w)).length / Math.min(focusWords.size, terms.length)
      : 0;
    const score = r3(Math.min(1, 0.35 * frequency + 0.25 * recency + 0.3 * strength + 0.1 * diversity + 0.15 * focus));
    const timed = members.filter((m) => m.ms !== null).sort((a, b) => a.ms! - b.ms! || a.i - b.i);
    let momentum: Res['opportunities'][number]['momentum'] = 'unknown';
    if (timed.length >= 2) {
      const mid = (timed[0].ms! + timed[timed.length - 1].ms!) / 2;
      const late = timed.filter((m) => m.ms! > mid).length;
      const early = timed.length - late;
      momentum = late > early * 1.25 ? 'rising' : early > late * 1.25 ? 'fading' : 'steady';
    }
    const kinds = [...new Set(members.map((m) => m.s.kind).filter((k): k is string => !!k))].sort();
    const kindText = kinds.join(' ').toLowerCase();
    const move =
      MOVES.find(([re]) => re.test(kindText))?.[1] ?? 'investigate: read the evidence signals and size the opportunity';
    const evidence = [...members]
      .sort((a, b) => b.strength - a.strength || (b.ms ?? -Infinity) - (a.ms ?? -Infinity) || a.i - b.i)
      .slice(0, 10)
      .map((m) => m.s.id);
    scored.push({
      id: '',
      anchor,
      label: terms.slice(0, 3).join(' / '),
      terms,
      score,
      factors: {
        frequency: r3(frequency),
        recency: r3(recency),
        strength: r3(strength),
        diversity: r3(diversity),
        focus: r3(focus),
      },
      signal_count: members.length,
      evidence_signal_ids: evidence,
      entities: entities.slice(0, 10),
      kinds: kinds.slice(0, 10),
      first_seen: timed.length ? isoOut(timed[0].t!) : null,
      last_seen: timed.length ? isoOut(timed[timed.length - 1].t!) : null,
      momentum,
      suggested_move: move,
    });
  }
  scored.sort((a, b) => b.score - a.score || b.signal_count - a.signal_count || (a.anchor < b.anchor ? -1 : 1));
  const used = new Set<string>();
  const opportunities = scored.slice(0, prefs.max_opportunities ?? 5).map(({ anchor, ...o }) => {
    let id = `opp-${slug(anchor)}`;
    for (let k = 2; used.has(id); k++) id = `opp-${slug(anchor)}-${k}`;
    used.add(id);
    return { ...o, id };
  });
  return {
    opportunities,
    unclustered_signal_ids: unclustered.slice(0, 50),
    summary: {
      signals: sigs.length,
      clusters: scored.length,
      clustered_signals: sigs.length - unclustered.length,
      clock: clock ? isoOut(clock) : null,
    },
    integration_hints: [
      {
        kind: 'backlog',
        target: 'tasks',
        detail: 'Create one exploration task per opportunity; link evidence_signal_ids.',
      },
      { kind: 'watch', target: 'alerts', detail: 'Alert when a rising opportunity gains signals from a new entity.' },
    ],
  };
}

export const signalsOpportunities = defineReasoning({
  path: '/signals/opportunities',
  summary:
    'Cluster signals into opportunities scored by frequency, recency, strength, source diversity and focus, with evidence signal ids.',
  request: signalsOpportunitiesRequest,
  response: signalsOpportunitiesResponse,
  compile: compileSignalsOpportunities,
  example: {
    surface: 'insights',
    focus: 'grow team accounts',
    now: '2026-04-27T12:00:00Z',
    signals: [
      {
        id: 's1',
        kind: 'feature_request',
        text: 'Can we export invoices to CSV for our accountant?',
        strength: 0.7,
        time: '2026-04-26T09:00:00Z',
        tags: ['export'],
        source: 'support',
        entity: 'Acme',
      },
      {
        id: 's2',
        kind: 'feature_request',
        text: 'Need bulk CSV export of invoices',
        strength: 0.8,
        time: '2026-04-27T08:00:00Z',
        tags: ['export'],
        source: 'sales',
        entity: 'Globex',
      },
      {
        id: 's3',
        kind: 'complaint',
        text: 'Export times out for large invoice ranges',
        strength: 0.9,
        time: '2026-04-27T10:00:00Z',
        tags: ['export', 'performance'],
        source: 'support',
        entity: 'Initech',
      },
      {
        id: 's4',
        kind: 'lead',
        text: 'Asked about team seats pricing for 40 users',
        strength: 0.6,
        time: '2026-04-20T10:00:00Z',
        tags: ['team', 'pricing'],
        source: 'sales',
        entity: 'Umbrella',
      },
      {
        id: 's5',
        kind: 'lead',
        text: 'Team plan trial for the design team',
        strength: 0.5,
        time: '2026-04-25T15:00:00Z',
        tags: ['team'],
        source: 'web',
        entity: 'Hooli',
      },
      {
        id: 's6',
        kind: 'mention',
        text: 'Love the new dark mode',
        strength: 0.3,
        time: '2026-04-27T11:00:00Z',
        source: 'social',
      },
    ],
    preferences: { max_opportunities: 3 },
  },
});

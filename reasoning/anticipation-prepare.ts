import type { DateTime } from 'luxon';
import { defineReasoning } from './types';
import {
  anticipationPrepareRequest,
  anticipationPrepareResponse,
  type AnticipationPrepareRequest,
  type AnticipationPrepareResponse,
} from '../schema/reasoning/anticipation-prepare';
import { isoOut, parseInstant, resolveZone } from './lib/luxon-time';
import { clip, keywordSet, keywordSetEach, splitSentences } from './lib/text-segments';

/**
 * Anticipatory preparation: each upcoming event inside the horizon gets a prep estimate, a
 * "prepare by" instant (luxon, caller's zone), a score from importance and remaining slack, a
 * checklist from its attendees, location, kind and notes, and the context items that share its
 * keywords or tags (inverted index, so matching never scans all items per event).
 */
type Res = AnticipationPrepareResponse;
type Ev = AnticipationPrepareRequest['events'][number];
/** A Map, not an object literal: a word such as `constructor` or `__proto__` must not find Object.prototype's members. */
const IMPORTANCE = new Map(Object.entries({ low: 1, medium: 2, normal: 2, high: 3, critical: 4, urgent: 4 }));
const HEAVY_KIND = /interview|presentation|demo|pitch|exam|review|board|talk|workshop/i;
const BUFFER_MIN = 15;

function importanceOf(v?: string): number {
  if (!v) return 2;
  const n = Number(v);
  if (Number.isFinite(n)) return Math.max(1, Math.min(4, Math.round((n / 5) * 4)));
  return IMPORTANCE.get(v.trim().toLowerCase()) ?? 2;
}

export function compileAnticipationPrepare(input: AnticipationPrepareRequest, _ctx: { surface?: string }): Res {
  const zone = resolveZone(input.timezone);
  const now = parseInstant(input.now, zone);
  const p = input.preferences;
  const maxPackets = p.max_packets ?? 5;
  const perPacket = p.max_items_per_packet ?? 5;
  const horizon = p.horizon_hours ?? 72;
  const skipped: Res['skipped'] = [];

  // Inverted index over context items: keyword/tag -> item indexes.
  const index = new Map<string, number[]>();
  const put = (k: string, i: number) => {
    const l = index.get(k);
    if (!l) index.set(k, [i]);
    else if (l[l.length - 1] !== i && l.length < 200) l.push(i); // bounded fan-out per keyword
  };
  const itemWords = keywordSetEach(
    input.context_items.map((c) => `${c.title} ${c.project ?? ''} ${(c.content ?? '').slice(0, 500)}`),
  );
  input.context_items.forEach((c, i) => {
    for (const w of itemWords[i]) put(w, i);
    for (const t of c.tags ?? []) put(`#${t.toLowerCase()}`, i);
  });

  const live: { ev: Ev; start: DateTime; end: DateTime | null }[] = [];
  for (const ev of input.events) {
    const start = parseInstant(ev.start, zone);
    if (!start || !now) skipped.push({ event_id: ev.id, reason: 'unparseable_start' });
    else if (start <= now) skipped.push({ event_id: ev.id, reason: 'already_started' });
    else if (start.diff(now, 'hours').hours > horizon) skipped.push({ event_id: ev.id, reason: 'beyond_horizon' });
    else live.push({ ev, start, end: parseInstant(ev.end, zone) });
  }

  const scored = live.map(({ ev, start, end }, order) => {
    const imp = importanceOf(ev.importance);
    const attendees = ev.attendees ?? [];
    const heavy = HEAVY_KIND.test(`${ev.kind ?? ''} ${ev.title}`);
    const prep =
      ev.prep_minutes ??
      Math.min(
        180,
        (heavy ? 45 : 10) + 5 * Math.min(attendees.length, 6) + (ev.location ? 15 : 0) + (imp >= 3 ? 15 : 0),
      );
    const prepareBy = start.minus({ minutes: prep + BUFFER_MIN });
    const lead = Math.round(start.diff(now!, 'minutes').minutes);
    const slack = Math.round(prepareBy.diff(now!, 'minutes').minutes);
    const urgency: 'now' | 'today' | 'upcoming' = slack <= 0 ? 'now' : slack <= 24 * 60 ? 'today' : 'upcoming';
    const pressure = Math.round((30 / (1 + Math.max(0, slack) / 60)) * 100) / 100;
    const score = Math.round((imp * 10 + pressure + (heavy ? 5 : 0)) * 100) / 100;
    return {
      order,
      start,
      end: end && end > start ? end : start.plus({ minutes: 30 }),
      ev,
      heavy,
      prep,
      attendees,
      prepareBy,
      lead,
      urgency,
      score,
      factors: [
        { name: 'importance', value: imp },
        { name: 'time_pressure', value: pressure },
        { name: 'heavy_kind', value: heavy ? 1 : 0 },
        { name: 'slack_minutes', value: slack },
      ],
    };
  });
  scored.sort((a, b) => b.score - a.score || a.start.toMillis() - b.start.toMillis() || a.order - b.order);
  for (const s of scored.slice(maxPackets)) skipped.push({ event_id: s.ev.id, reason: 'over_packet_cap' });

  // Context, checklist and questions only for the packets kept: matching every event in the
  // horizon against the context index cost far more than scoring it.
  const packets = scored
    .slice(0, maxPackets)
    .map(({ ev, heavy, prep, attendees, start, prepareBy, lead, urgency, score, factors }, k) => {
      // Context: shared keywords (1 point each), attendee names and shared tags (2 points).
      const hits = new Map<number, number>();
      for (const w of keywordSet(`${ev.title} ${(ev.notes ?? '').slice(0, 300)}`))
        for (const i of index.get(w) ?? []) hits.set(i, (hits.get(i) ?? 0) + 1);
      for (const w of keywordSet(attendees.join(' ')))
        for (const i of index.get(w) ?? []) hits.set(i, (hits.get(i) ?? 0) + 2);
      for (const t of ev.tags ?? [])
        for (const i of index.get(`#${t.toLowerCase()}`) ?? []) hits.set(i, (hits.get(i) ?? 0) + 2);
      const ctxIds = [...hits.entries()]
        .filter(([, h]) => h >= 2)
        .sort((a, b) => b[1] - a[1] || a[0] - b[0])
        .slice(0, perPacket)
        .map(([i]) => input.context_items[i].id);

      const checklist = [
        ...(heavy
          ? [`Rehearse or outline "${clip(ev.title, 60)}" (${Math.round(prep * 0.6)} min)`]
          : [`Skim the agenda for "${clip(ev.title, 60)}"`]),
        ...attendees.slice(0, 5).map((a) => `Recall the last exchange with ${a}`),
        ...(ev.location ? [`Plan the way to ${ev.location}; be ready to leave ${BUFFER_MIN} min early`] : []),
        ...ctxIds.map((id) => `Read context item ${id}`),
      ];
      const questions = (ev.notes ? splitSentences(ev.notes) : [])
        .filter((s) => s.trim().endsWith('?'))
        .slice(0, 5)
        .map((s) => clip(s, 200));
      return {
        id: `prep-${k + 1}`,
        event_id: ev.id,
        title: ev.title,
        starts_at: isoOut(start),
        lead_minutes: lead,
        prep_minutes: prep,
        prepare_by: isoOut(prepareBy),
        urgency,
        score,
        factors,
        checklist,
        context_item_ids: ctxIds,
        open_questions: questions,
      };
    });

  // Overlaps among the events in the horizon: sweep by start, compare with the latest-ending one.
  const byStart = [...scored].sort((a, b) => a.start.toMillis() - b.start.toMillis() || a.order - b.order);
  const conflicts: Res['conflicts'] = [];
  let open: (typeof byStart)[number] | null = null;
  for (const s of byStart) {
    if (open && s.start < open.end && conflicts.length < 100)
      conflicts.push({
        event_ids: [open.ev.id, s.ev.id],
        overlap_minutes: Math.round((s.end < open.end ? s.end : open.end).diff(s.start, 'minutes').minutes),
      });
    if (!open || s.end > open.end) open = s;
  }

  return {
    packets,
    conflicts,
    skipped: skipped.slice(0, 1000),
    now: now ? isoOut(now) : null,
    integration_hints: [
      ...packets
        .filter((x) => x.urgency !== 'upcoming')
        .slice(0, 5)
        .map((x) => ({
          kind: 'calendar_block',
          target: 'calendar',
          detail: `block ${x.prep_minutes} min ending at ${x.prepare_by} to prepare ${x.event_id}`,
        })),
      {
        kind: 'notification',
        target: input.surface ?? 'app',
        detail: `remind at each packet's prepare_by (${packets.length} packet(s))`,
      },
      ...(conflicts.length
        ? [
            {
              kind: 'reschedule',
              target: 'calendar',
              detail: `${conflicts.length} overlapping pair(s) need a decision`,
            },
          ]
        : []),
    ],
  };
}

export const anticipationPrepare = defineReasoning({
  path: '/anticipation/prepare',
  summary:
    'Prepare packets for upcoming events, ranked by importance and lead time, with matched context and conflicts.',
  request: anticipationPrepareRequest,
  response: anticipationPrepareResponse,
  compile: compileAnticipationPrepare,
  example: {
    surface: 'mobile',
    now: '2026-06-08T08:30:00',
    timezone: 'Europe/London',
    events: [
      {
        id: 'ev-pitch',
        title: 'Series A pitch to Northwind Ventures',
        start: '2026-06-08T14:00:00',
        end: '2026-06-08T15:00:00',
        kind: 'presentation',
        importance: 'critical',
        attendees: ['Maya Chen'],
        location: 'Northwind office, King St',
        tags: ['fundraising'],
        notes: 'Bring updated metrics. Will they ask about churn?',
      },
      {
        id: 'ev-1on1',
        title: 'Weekly 1:1 with Sam',
        start: '2026-06-08T14:30:00',
        end: '2026-06-08T15:00:00',
        kind: 'meeting',
        importance: 'medium',
        attendees: ['Sam'],
      },
      {
        id: 'ev-dentist',
        title: 'Dentist',
        start: '2026-06-10T09:00:00',
        importance: 'low',
        location: 'High St clinic',
      },
      { id: 'ev-past', title: 'Standup', start: '2026-06-08T08:00:00' },
      { id: 'ev-far', title: 'Board meeting', start: '2026-07-01T10:00:00', importance: 'high' },
    ],
    context_items: [
      { id: 'doc-deck', title: 'Pitch deck v7', tags: ['fundraising'], content: 'Metrics, churn, ARR growth' },
      {
        id: 'doc-churn',
        title: 'Churn analysis May',
        content: 'Churn fell to 2.1% after onboarding changes; metrics attached',
        tags: ['metrics'],
      },
      { id: 'note-sam', title: 'Notes for Sam', content: 'Career goals, promotion timeline' },
    ],
    preferences: { max_packets: 3, horizon_hours: 72 },
  },
});

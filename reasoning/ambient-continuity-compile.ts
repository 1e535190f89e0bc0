import type { DateTime } from 'luxon';
import { defineReasoning } from './types';
import {
  ambientContinuityCompileRequest,
  ambientContinuityCompileResponse,
  type AmbientContinuityCompileRequest as Req,
  type AmbientContinuityCompileResponse as Res,
} from '../schema/reasoning/ambient-continuity-compile';
import { isoOut, parseInstant, resolveZone } from './lib/luxon-time';
import { clip } from './lib/text-segments';
import { commitmentStatus, nextOccurrence, stateOf, type EntryState } from './lib/continuity-rules';

type Entry = Res['ledger']['entries'][number] & {
  ms: number | null;
  status: string;
  signals: Set<string>;
  due: number | null;
  dueIso: string | null;
  importance: number;
  score: number;
};
const HOUR = 3_600_000;

export function compileAmbientContinuity(input: Req, ctx: { surface?: string } = {}): Res {
  const tz = resolveZone(input.timezone);
  const prefs = input.preferences ?? {};
  const cooldownMin = prefs.cooldown_minutes ?? 90;
  const at = (s?: string | null) => parseInstant(s, tz);
  let clock: DateTime | null = at(input.now);
  if (!clock) {
    for (const e of input.recent_events) {
      const t = at(e.time);
      if (t && (!clock || t > clock)) clock = t;
    }
    for (const w of input.work_items ?? []) {
      const t = at(w.updated_at);
      if (t && (!clock || t > clock)) clock = t;
    }
  }
  const ref = clock?.toMillis() ?? null;

  const entries = new Map<string, Entry>();
  const byTitle = new Map<string, string>();
  const norm = (s?: string) => (s ?? '').trim().toLowerCase().replace(/\s+/g, ' ');
  const blank = (id: string, title: string, kind: string | null, project: string | null): Entry => ({
    id,
    title: clip(title || id, 200),
    kind,
    project,
    state: 'active',
    last_seen: null,
    touches: 0,
    surfaces: [],
    event_ids: [],
    carried_over: false,
    ms: null,
    status: '',
    signals: new Set(),
    due: null,
    dueIso: null,
    importance: 0.5,
    score: 0,
  });
  const touch = (e: Entry, t: DateTime | null, source?: string) => {
    if (t && (e.ms === null || t.toMillis() > e.ms)) {
      e.ms = t.toMillis();
      e.last_seen = isoOut(t);
    }
    if (source && e.surfaces.length < 20 && !e.surfaces.includes(source)) e.surfaces.push(source);
  };
  for (const w of input.work_items ?? []) {
    if (entries.has(w.id)) continue;
    const e = blank(w.id, w.title ?? w.id, w.kind ?? null, w.project ?? null);
    e.status = w.status ?? '';
    e.importance = w.importance ?? 0.5;
    const due = at(w.due);
    e.due = due?.toMillis() ?? null;
    e.dueIso = due ? isoOut(due) : null;
    (w.tags ?? []).forEach((s) => e.signals.add(s.toLowerCase()));
    touch(e, at(w.updated_at), w.source);
    entries.set(w.id, e);
    if (w.title && !byTitle.has(norm(w.title))) byTitle.set(norm(w.title), w.id);
  }
  // Events join their work item by item_id, else by title; otherwise events with one title+project form an entry.
  const events = input.recent_events.map((ev, i) => ({ ev, i, t: at(ev.time) }));
  events.sort((a, b) => (a.t?.toMillis() ?? -Infinity) - (b.t?.toMillis() ?? -Infinity) || a.i - b.i);
  const entryOfEvent = new Map<number, string>();
  for (const { ev, i, t } of events) {
    const gKey = `${norm(ev.title)}|${norm(ev.project)}`;
    let key = ev.item_id ?? byTitle.get(norm(ev.title)) ?? (ev.title ? byTitle.get(gKey) : undefined);
    if (!key) {
      key = ev.id;
      if (ev.title) byTitle.set(gKey, key);
    }
    let e = entries.get(key);
    if (!e) entries.set(key, (e = blank(key, ev.title ?? key, ev.kind ?? null, ev.project ?? null)));
    e.touches++;
    if (ev.status) e.status = ev.status;
    (ev.signals ?? []).forEach((s) => e.signals.add(s.toLowerCase()));
    if (ev.kind) e.signals.add(ev.kind.toLowerCase());
    e.event_ids.unshift(ev.id);
    if (e.event_ids.length > 10) e.event_ids.pop();
    touch(e, t, ev.source);
    entryOfEvent.set(i, key);
  }
  for (const p of input.previous_ledger?.entries ?? []) {
    const e = entries.get(p.id);
    if (e) {
      e.touches += p.touches ?? 0;
      (p.surfaces ?? []).forEach((s) => touch(e, null, s));
      continue;
    }
    if (/^done$/i.test(p.state ?? '')) continue;
    const c = blank(p.id, p.title ?? p.id, null, null);
    c.status = p.state ?? '';
    c.touches = p.touches ?? 0;
    c.carried_over = true;
    (p.surfaces ?? []).forEach((s) => touch(c, null, s));
    touch(c, at(p.last_seen));
    entries.set(p.id, c);
  }

  const staleMs = (prefs.stale_after_hours ?? 48) * HOUR;
  const activeProject = norm(input.active_project);
  for (const e of entries.values()) {
    e.state = stateOf(e.status, e.signals, e.ms, e.due, ref, staleMs);
    const recency = ref !== null && e.ms !== null ? Math.exp(-Math.max(0, ref - e.ms) / (24 * HOUR)) : 0.3;
    e.score =
      recency +
      0.3 * Math.log2(1 + e.touches) +
      (activeProject && norm(e.project ?? '') === activeProject ? 0.5 : 0) +
      e.importance * 0.5 +
      (e.state === 'overdue' ? 0.6 : e.state === 'open_loop' ? 0.3 : e.state === 'done' ? -1 : 0);
  }
  const ranked = [...entries.values()].sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const maxEntries = prefs.max_entries ?? 50;
  const kept = ranked.slice(0, maxEntries);
  const hrs = (ms: number | null) => (ref !== null && ms !== null ? Math.round(((ref - ms) / HOUR) * 10) / 10 : null);

  const paused_work = kept
    .filter((e) => e.state === 'paused')
    .slice(0, 20)
    .map((e) => ({
      id: e.id,
      title: e.title,
      paused_since: e.last_seen,
      reason: /pause|hold|snooze/i.test(e.status) ? `status ${e.status}` : `untouched for ${hrs(e.ms) ?? '?'} h`,
      resume_hint: `Reopen "${e.title}"${e.surfaces.length ? ` on ${e.surfaces[e.surfaces.length - 1]}` : ''}${e.event_ids.length ? ` from event ${e.event_ids[0]}` : ''}.`,
    }));
  const open_loops = kept
    .filter((e) => e.state === 'open_loop')
    .slice(0, 20)
    .map((e) => ({
      id: e.id,
      title: e.title,
      event_ids: e.event_ids.slice(0, 5),
      age_hours: hrs(e.ms),
      reason:
        e.status && /open|wait|block|pending|review|question/i.test(e.status)
          ? `status ${e.status}`
          : `signals: ${[...e.signals]
              .filter((s) => /question|wait|block|reply|review|todo/.test(s))
              .slice(0, 3)
              .join(', ')}`,
    }));
  const commitments: Res['commitments'] = [];
  for (const c of input.temporal_commitments ?? []) {
    const s = at(c.start) ?? at(c.due);
    commitments.push({
      id: c.id,
      title: clip(c.title ?? c.task_id ?? c.id, 200),
      when: s ? isoOut(s) : null,
      task_id: c.task_id ?? null,
      status: commitmentStatus(c.status, at(c.start), at(c.end) ?? at(c.due), clock),
    });
  }
  const linked = new Set(commitments.map((c) => c.task_id));
  for (const e of kept)
    if (e.due !== null && e.state !== 'done' && !linked.has(e.id))
      commitments.push({
        id: e.id,
        title: e.title,
        when: e.dueIso,
        task_id: e.id,
        status: ref !== null && e.due < ref ? 'overdue' : 'upcoming',
      });
  // Parsed once per commitment: parsing inside the comparator cost n·log n luxon parses.
  const whenMs = new Map(commitments.map((c) => [c, c.when ? at(c.when)!.toMillis() : Infinity]));
  commitments.sort((a, b) => whenMs.get(a)! - whenMs.get(b)! || (a.id < b.id ? -1 : 1));
  const outCommitments = commitments.slice(0, 50);

  const recent = [...events]
    .reverse()
    .slice(0, prefs.max_events ?? 10)
    .map(({ ev, i, t }) => ({
      id: ev.id,
      kind: ev.kind ?? null,
      title: clip(ev.title ?? ev.summary ?? ev.id, 200),
      project: ev.project ?? null,
      source: ev.source ?? null,
      time: t ? isoOut(t) : null,
      entry_id: entryOfEvent.get(i)!,
    }));

  const cooldowns: Res['cooldown_hints'] = [];
  const seen = new Set<string>();
  const addCd = (key: string, until: DateTime | null, reason: string) => {
    if (!until || seen.has(key) || cooldowns.length >= 50 || (ref !== null && until.toMillis() <= ref)) return;
    seen.add(key);
    cooldowns.push({ key, until: isoOut(until), reason });
  };
  for (const c of input.previous_ledger?.cooldowns ?? [])
    addCd(c.key, at(c.until), c.reason ?? 'carried from previous ledger');
  for (const e of kept) {
    if (e.ms === null || ref === null) continue;
    const last = at(e.last_seen)!;
    if (e.state === 'done' && ref - e.ms < 24 * HOUR)
      addCd(e.id, last.plus({ hours: 24 }), 'finished recently; do not resurface');
    else if (e.touches >= 3 && ref - e.ms < 2 * HOUR)
      addCd(e.id, last.plus({ minutes: cooldownMin }), 'worked on heavily just now; no nudge needed');
  }
  for (const { ev, i, t } of events) {
    const next = ev.recurrence && t ? nextOccurrence(ev.recurrence, t, clock) : null;
    if (next) addCd(entryOfEvent.get(i)!, next, `recurring (${ev.recurrence}); next occurrence`);
  }
  const committed = new Set(outCommitments.map((c) => c.id));
  const candidates = [
    ...outCommitments
      .filter((c) => c.status !== 'done')
      .map((c) => ({
        id: c.id,
        title: c.title,
        project: (c.task_id && entries.get(c.task_id)?.project) || null,
        state: (c.status === 'overdue' ? 'overdue' : 'commitment') as EntryState,
        due: c.when,
        weight: 0.8,
      })),
    ...kept
      .filter((e) => e.state !== 'done' && !committed.has(e.id))
      .map((e) => ({
        id: e.id,
        kind: e.kind,
        title: e.title,
        project: e.project,
        state: e.state,
        last_seen: e.last_seen,
        due: e.dueIso,
        weight: Math.round(Math.min(1, Math.max(0, e.score / 3)) * 1000) / 1000,
        surfaces: e.surfaces,
        signals: [...e.signals].slice(0, 50),
      })),
  ].slice(0, prefs.max_candidates ?? 20);

  const hints: Res['integration_hints'] = [
    {
      kind: 'ledger_store',
      target: 'previous_ledger',
      detail: 'Send ledger back as previous_ledger (with cooldowns) on the next compile to carry touches forward.',
    },
    {
      kind: 'suggest',
      target: '/v1/ambient/intent/suggest',
      detail: 'Post suggestion_context with current signals to rank ambient intents.',
    },
  ];
  if (paused_work.length)
    hints.push({
      kind: 'resume_card',
      target: input.surface ?? ctx.surface ?? 'home',
      detail: `Show ${paused_work.length} paused item(s) with their resume_hint.`,
    });
  if (outCommitments.length)
    hints.push({
      kind: 'calendar',
      target: 'calendar',
      detail: `${outCommitments.length} commitment(s); overdue ones need a reschedule via /v1/temporal/coordinate.`,
    });

  return {
    ledger: {
      compiled_at: clock ? isoOut(clock) : null,
      entries: kept.map(
        ({ ms: _m, status: _s, signals: _g, due: _d, dueIso: _q, importance: _i, score: _c, ...rest }) => rest,
      ),
      dropped: ranked.length - kept.length,
    },
    paused_work,
    open_loops,
    commitments: outCommitments,
    recent_events: recent,
    cooldown_hints: cooldowns,
    suggestion_context: {
      surface: input.surface ?? ctx.surface ?? null,
      profile: input.profile ?? null,
      active_goal: input.active_goal ?? null,
      active_project: input.active_project ?? null,
      now: clock ? isoOut(clock) : null,
      candidates,
      cooldowns: cooldowns.map((c) => ({ key: c.key, until: c.until, reason: clip(c.reason, 200) })),
    },
    integration_hints: hints,
  };
}

export const ambientContinuityCompile = defineReasoning({
  path: '/ambient/continuity/compile',
  summary:
    'Compile a compact cross-surface continuity ledger: paused work, open loops, commitments, cooldowns and a suggestion_context for /ambient/intent/suggest.',
  request: ambientContinuityCompileRequest,
  response: ambientContinuityCompileResponse,
  compile: compileAmbientContinuity,
  example: {
    surface: 'desktop',
    profile: 'builder',
    active_goal: 'Ship billing v2',
    active_project: 'billing',
    now: '2026-04-27T16:00:00Z',
    recent_events: [
      {
        id: 'e1',
        kind: 'edit',
        title: 'Billing API spec',
        project: 'billing',
        status: 'active',
        source: 'editor',
        time: '2026-04-27T15:10:00Z',
        signals: ['focus'],
      },
      {
        id: 'e2',
        kind: 'message',
        title: 'Pricing question from Ana',
        project: 'billing',
        status: 'waiting',
        source: 'chat',
        time: '2026-04-27T14:00:00Z',
        summary: 'Ana asked whether annual plans get a discount.',
        signals: ['question'],
      },
      {
        id: 'e3',
        kind: 'edit',
        title: 'Migration runbook',
        project: 'billing',
        source: 'editor',
        time: '2026-04-24T10:00:00Z',
      },
      {
        id: 'e4',
        kind: 'meeting',
        title: 'Team standup',
        source: 'calendar',
        time: '2026-04-27T09:00:00Z',
        recurrence: 'weekdays',
      },
      {
        id: 'e5',
        kind: 'edit',
        title: 'Billing API spec',
        project: 'billing',
        source: 'mobile',
        time: '2026-04-27T15:40:00Z',
      },
      {
        id: 'e6',
        kind: 'complete',
        title: 'Invoice template',
        project: 'billing',
        status: 'done',
        source: 'tasks',
        time: '2026-04-27T11:00:00Z',
        item_id: 'w2',
      },
    ],
    work_items: [
      { id: 'w1', kind: 'doc', title: 'Billing API spec', project: 'billing', status: 'in_progress', importance: 0.9 },
      { id: 'w2', kind: 'task', title: 'Invoice template', project: 'billing', status: 'todo' },
      { id: 'w3', kind: 'task', title: 'Renew domain', status: 'todo', due: '2026-04-26T23:59:00Z', importance: 0.7 },
    ],
    temporal_commitments: [
      { id: 'b1', task_id: 'w1', title: 'Write API spec', start: '2026-04-27T17:00:00Z', end: '2026-04-27T18:30:00Z' },
    ],
    previous_ledger: {
      compiled_at: '2026-04-26T18:00:00Z',
      entries: [
        { id: 'w1', touches: 4, surfaces: ['editor'] },
        {
          id: 'old-draft',
          title: 'Blog draft: pricing',
          state: 'paused',
          last_seen: '2026-04-20T12:00:00Z',
          touches: 2,
        },
      ],
      cooldowns: [{ key: 'old-draft', until: '2026-04-28T09:00:00Z', reason: 'dismissed yesterday' }],
    },
  },
});

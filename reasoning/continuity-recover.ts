import { defineReasoning } from './types';
import {
  continuityRecoverRequest,
  continuityRecoverResponse,
  type ContinuityRecoverRequest as Req,
  type ContinuityRecoverResponse as Res,
} from '../schema/reasoning/continuity-recover';
import { isoOut, parseInstant, resolveZone } from './lib/luxon-time';
import { clip } from './lib/text-segments';

const DONE = /\b(done|complete[d]?|closed|resolved|merged|shipped|cancell?ed)\b/i;
const BLOCKING =
  /\b(fail(ed|ure|ing)?|error|broken|broke|block(ed|er|ing)?|conflict|reject(ed)?|revert(ed)?|regress(ion)?|outage|incident|urgent|changes requested)\b/i;

function awayLabel(min: number): string {
  if (min < 60) return `${Math.round(min)} min`;
  if (min < 48 * 60) return `${Math.floor(min / 60)} h ${Math.round(min % 60)} min`;
  return `${Math.round(min / 1440)} days`;
}

export function compileContinuityRecover(input: Req, ctx: { surface?: string } = {}): Res {
  const tz = resolveZone(input.timezone);
  const at = (s?: string) => parseInstant(s, tz);
  const prefs = input.preferences ?? {};
  const now = at(input.now);

  // Where you left off: the latest timed event (ties: later in the list); untimed lists use the last entry.
  let last: { i: number; ms: number | null } | null = null;
  input.last_events.forEach((e, i) => {
    const ms = at(e.time)?.toMillis() ?? null;
    if (!last || (ms !== null && (last.ms === null || ms >= last.ms)) || (ms === null && last.ms === null))
      last = { i, ms };
  });
  const lastEv = last ? input.last_events[(last as { i: number }).i] : null;
  const leftAt = at(input.left_at) ?? (lastEv ? at(lastEv.time) : null);
  let minutes: number | null = null;
  let basis: Res['time_away']['basis'] = 'unknown';
  if (now && leftAt) {
    minutes = Math.max(0, Math.round(now.diff(leftAt, 'minutes').minutes));
    basis = 'clock';
  } else if (input.away_minutes !== undefined) {
    minutes = input.away_minutes;
    basis = 'away_minutes';
  }
  const decay = minutes === null ? 'unknown' : minutes < 15 ? 'fresh' : minutes < 240 ? 'warm' : 'cold';
  const leftMs = leftAt?.toMillis() ?? null;

  // Open items: readiness from dependencies, score from focus, progress, recency and changes.
  const items = input.open_items ?? [];
  const itemById = new Map(items.map((it) => [it.id, it]));
  const changes = input.changes_since ?? [];
  const changedItems = new Map<string, number>();
  const lastItem = lastEv?.item_id ?? null;
  const touched = new Set(input.last_events.map((e) => e.item_id).filter((x): x is string => !!x));
  const impacts = changes
    .map((c, i) => ({ c, i, ms: at(c.time)?.toMillis() ?? null }))
    .filter(({ ms }) => ms === null || leftMs === null || ms >= leftMs)
    .map(({ c, i, ms }) => {
      const text = `${c.title ?? ''} ${c.kind ?? ''} ${c.summary ?? ''} ${(c.tags ?? []).join(' ')}`;
      const onItem = !!c.item_id && (itemById.has(c.item_id) || touched.has(c.item_id));
      const impact: 'blocking' | 'relevant' | 'background' =
        BLOCKING.test(text) && (onItem || !c.item_id) ? 'blocking' : onItem ? 'relevant' : 'background';
      if (c.item_id && impact !== 'background') changedItems.set(c.item_id, (changedItems.get(c.item_id) ?? 0) + 1);
      const reason =
        impact === 'blocking'
          ? `${BLOCKING.exec(text)![0].toLowerCase()}${c.item_id ? ` on ${c.item_id}` : ''}`
          : impact === 'relevant'
            ? `touches ${c.item_id}`
            : 'not linked to your open work';
      return { c, i, ms, impact, reason: c.actor ? `${reason} (by ${c.actor})` : reason };
    });
  const rank = { blocking: 0, relevant: 1, background: 2 } as const;
  impacts.sort((a, b) => rank[a.impact] - rank[b.impact] || (b.ms ?? -Infinity) - (a.ms ?? -Infinity) || a.i - b.i);
  const what_changed = impacts.slice(0, prefs.max_changes ?? 10).map(({ c, ms, impact, reason }) => ({
    id: c.id,
    title: clip(c.title ?? c.summary ?? c.id, 200),
    time: ms === null ? null : isoOut(at(c.time)!),
    item_id: c.item_id ?? null,
    impact,
    reason,
  }));

  const scored = items
    .filter((it) => !DONE.test(it.status ?? ''))
    .map((it, i) => {
      const blocked_by = (it.depends_on ?? []).filter(
        (d) => itemById.has(d) && !DONE.test(itemById.get(d)!.status ?? ''),
      );
      const p = it.progress ?? null;
      const upd = at(it.updated_at)?.toMillis() ?? null;
      const recency = upd !== null && leftMs !== null ? Math.exp(-Math.max(0, leftMs - upd) / (24 * 3_600_000)) : 0.3;
      const score =
        (it.id === lastItem ? 1 : touched.has(it.id) ? 0.5 : 0) +
        (p !== null && p > 0 && p < 1 ? 0.4 : 0) +
        0.3 * recency +
        (changedItems.has(it.id) ? 0.3 : 0) +
        (blocked_by.length ? -0.6 : 0) +
        (/progress|doing|active/i.test(it.status ?? '') ? 0.2 : 0);
      return { i, it, blocked_by, score: Math.round(score * 1000) / 1000 };
    })
    .sort((a, b) => b.score - a.score || a.i - b.i);
  const open_items = scored.slice(0, prefs.max_open_items ?? 10).map(({ it, blocked_by, score }) => ({
    id: it.id,
    title: clip(it.title ?? it.id, 200),
    status: it.status ?? null,
    progress: it.progress ?? null,
    next_step: it.next_step ?? null,
    ready: blocked_by.length === 0,
    blocked_by,
    changed_while_away: changedItems.has(it.id),
    score,
  }));

  // First re-entry action: a blocking change on your work beats everything; cold context gets a re-read first.
  const blocking = what_changed.find((c) => c.impact === 'blocking');
  const topReady = open_items.find((o) => o.ready);
  const topBlocked = open_items.find((o) => !o.ready);
  let first: Res['first_reentry_action'];
  if (blocking)
    first = {
      kind: 'review_change',
      target_id: blocking.id,
      text: `Review "${blocking.title}" first: ${blocking.reason}.`,
      estimated_minutes: 10,
    };
  else if (decay === 'cold' && lastEv)
    first = {
      kind: 'restart_context',
      target_id: lastEv.id,
      text: `Re-read where you stopped: "${clip(lastEv.title ?? lastEv.detail ?? lastEv.id, 120)}" before changing anything.`,
      estimated_minutes: 10,
    };
  else if (topReady)
    first = {
      kind: 'resume_item',
      target_id: topReady.id,
      text: topReady.next_step ? `Resume "${topReady.title}": ${topReady.next_step}.` : `Resume "${topReady.title}".`,
      estimated_minutes: decay === 'fresh' ? 5 : 15,
    };
  else if (topBlocked)
    first = {
      kind: 'unblock',
      target_id: topBlocked.blocked_by[0],
      text: `Unblock "${topBlocked.title}" by finishing ${topBlocked.blocked_by[0]}.`,
      estimated_minutes: 15,
    };
  else
    first = {
      kind: 'start_fresh',
      target_id: null,
      text: input.intent
        ? `Nothing open: restart "${clip(input.intent, 120)}" with a small first step.`
        : 'Nothing open: pick the next task.',
      estimated_minutes: 5,
    };

  const steps: Res['warm_up_steps'] = [];
  const step = (text: string, target: string | null) =>
    steps.push({ order: steps.length + 1, text, target_id: target });
  if (decay === 'cold' || decay === 'warm')
    step(
      lastEv
        ? `Skim the last ${Math.min(5, input.last_events.length)} event(s) of the session, ending with "${clip(lastEv.title ?? lastEv.id, 80)}".`
        : 'Skim the session notes.',
      lastEv?.id ?? null,
    );
  const relevant = what_changed.filter((c) => c.impact !== 'background');
  if (relevant.length)
    step(
      `Read ${relevant.length} change(s) that touch your work, starting with "${relevant[0].title}".`,
      relevant[0].id,
    );
  if (first.kind !== 'review_change' && first.kind !== 'restart_context') step(first.text, first.target_id);
  else if (topReady)
    step(
      topReady.next_step
        ? `Then resume "${topReady.title}": ${topReady.next_step}.`
        : `Then resume "${topReady.title}".`,
      topReady.id,
    );
  if (topBlocked && first.kind !== 'unblock')
    step(
      `Check whether ${topBlocked.blocked_by.join(', ')} still block "${topBlocked.title}".`,
      topBlocked.blocked_by[0],
    );
  const warm_up_steps = steps.slice(0, prefs.max_steps ?? 4);

  const brief = [
    lastEv
      ? `You left off at "${clip(lastEv.title ?? lastEv.detail ?? lastEv.id, 120)}"${lastEv.kind ? ` (${lastEv.kind})` : ''}${input.intent ? ` while working on ${clip(input.intent, 80)}` : ''}.`
      : 'No session events were recorded.',
    minutes === null ? 'Time away is unknown.' : `You have been away ${awayLabel(minutes)} (${decay} context).`,
    impacts.length
      ? `${impacts.length} change(s) since then, ${impacts.filter((x) => x.impact === 'blocking').length} blocking.`
      : 'Nothing changed while you were away.',
    `First: ${first.text}`,
  ].join(' ');
  const surface = input.surface ?? ctx.surface ?? 'app';
  return {
    where_you_left_off: lastEv
      ? {
          event_id: lastEv.id,
          title: clip(lastEv.title ?? lastEv.detail ?? lastEv.id, 200),
          time: at(lastEv.time) ? isoOut(at(lastEv.time)!) : null,
          item_id: lastEv.item_id ?? null,
          last_action: lastEv.kind ?? 'event',
          detail: lastEv.detail ? clip(lastEv.detail, 300) : null,
        }
      : null,
    time_away: { minutes, label: minutes === null ? 'unknown' : awayLabel(minutes), basis, context_decay: decay },
    what_changed,
    open_items,
    first_reentry_action: first,
    warm_up_steps,
    recovery_brief: brief,
    integration_hints: [
      {
        kind: 'resume_card',
        target: surface,
        detail: 'Show recovery_brief with first_reentry_action as the primary button.',
      },
      {
        kind: 'deep_link',
        target: first.target_id ?? 'none',
        detail: 'Open the target of first_reentry_action directly on re-entry.',
      },
      ...(what_changed.length
        ? [
            {
              kind: 'digest',
              target: 'notifications',
              detail: 'Collapse background changes into a digest; show blocking ones inline.',
            },
          ]
        : []),
    ],
  };
}

export const continuityRecover = defineReasoning({
  path: '/continuity/recover',
  summary:
    'Recovery brief for an interrupted session: where you left off, time away, what changed, open items and the first re-entry action.',
  request: continuityRecoverRequest,
  response: continuityRecoverResponse,
  compile: compileContinuityRecover,
  example: {
    surface: 'desktop',
    session_id: 'sess-42',
    intent: 'refactor the billing export',
    now: '2026-04-28T09:30:00+02:00',
    timezone: 'Europe/Berlin',
    last_events: [
      {
        id: 'ev1',
        kind: 'edit',
        title: 'export.ts: split CSV writer',
        time: '2026-04-27T17:05:00+02:00',
        item_id: 'i1',
      },
      {
        id: 'ev2',
        kind: 'run',
        title: 'npm test (3 failing)',
        time: '2026-04-27T17:40:00+02:00',
        item_id: 'i1',
        detail: 'CSV header order differs from snapshot',
      },
      {
        id: 'ev3',
        kind: 'note',
        title: 'TODO: ask Ana about header order',
        time: '2026-04-27T17:42:00+02:00',
        item_id: 'i2',
      },
    ],
    open_items: [
      {
        id: 'i1',
        title: 'Refactor CSV export',
        status: 'in_progress',
        progress: 0.6,
        next_step: 'fix header order in the 3 failing tests',
      },
      { id: 'i2', title: 'Confirm header order with Ana', status: 'open' },
      { id: 'i3', title: 'Ship export v2', status: 'todo', depends_on: ['i1', 'i2'] },
    ],
    changes_since: [
      {
        id: 'c1',
        title: 'Ana replied: keep legacy header order',
        kind: 'message',
        time: '2026-04-28T08:10:00+02:00',
        actor: 'Ana',
        item_id: 'i2',
      },
      {
        id: 'c2',
        title: 'main: CI failed on export snapshot',
        kind: 'ci',
        time: '2026-04-28T07:50:00+02:00',
        item_id: 'i1',
      },
      { id: 'c3', title: 'Design system release 4.2', kind: 'release', time: '2026-04-28T09:00:00+02:00' },
    ],
  },
});

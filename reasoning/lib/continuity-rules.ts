import type { DateTime } from 'luxon';

/** Ledger rules for /ambient/continuity/compile: entry states, commitment status, recurrences. */
export type EntryState = 'active' | 'paused' | 'open_loop' | 'commitment' | 'overdue' | 'done';

const DONE = /\b(done|complete[d]?|closed|resolved|archived|shipped|merged|cancell?ed)\b/i;
const PAUSED = /\b(paused|on[ _-]?hold|snoozed|parked|deferred)\b/i;
const OPEN = /\b(open|waiting|blocked|pending|in[ _-]?review|awaiting|needs[ _-]?reply|question)\b/i;
const OPEN_SIGNAL =
  /^(question|waiting|blocked|awaiting[ _-]?reply|needs[ _-]?reply|review[ _-]?requested|todo|unanswered|mention)$/;

export function stateOf(
  status: string,
  signals: Set<string>,
  lastMs: number | null,
  dueMs: number | null,
  ref: number | null,
  staleMs: number,
): EntryState {
  if (DONE.test(status)) return 'done';
  if (dueMs !== null && ref !== null && dueMs < ref) return 'overdue';
  if (PAUSED.test(status)) return 'paused';
  if (OPEN.test(status)) return 'open_loop';
  for (const s of signals) if (OPEN_SIGNAL.test(s)) return 'open_loop';
  if (lastMs !== null && ref !== null && ref - lastMs > staleMs) return 'paused';
  return 'active';
}

export function commitmentStatus(
  status: string | undefined,
  start: DateTime | null,
  end: DateTime | null,
  clock: DateTime | null,
): 'upcoming' | 'in_progress' | 'overdue' | 'done' | 'unscheduled' {
  if (status && DONE.test(status)) return 'done';
  if (!start && !end) return 'unscheduled';
  if (!clock) return 'upcoming';
  if (end && end < clock) return 'overdue';
  if (start && start <= clock) return 'in_progress';
  return 'upcoming';
}

/** Next occurrence after `clock` (or after `last` without a clock) of a recurring event; luxon calendar math. */
export function nextOccurrence(recurrence: string, last: DateTime, clock: DateTime | null): DateTime | null {
  const r = recurrence.trim().toLowerCase();
  const step = (d: DateTime): DateTime | null => {
    if (/hour/.test(r)) return d.plus({ hours: 1 });
    if (/weekday|business/.test(r)) {
      let n = d.plus({ days: 1 });
      while (n.weekday > 5) n = n.plus({ days: 1 });
      return n;
    }
    if (/daily|day/.test(r)) return d.plus({ days: 1 });
    if (/biweekly|fortnight/.test(r)) return d.plus({ weeks: 2 });
    if (/week/.test(r)) return d.plus({ weeks: 1 });
    if (/month/.test(r)) return d.plus({ months: 1 });
    if (/year|annual/.test(r)) return d.plus({ years: 1 });
    return null;
  };
  let next = step(last);
  // Bounded catch-up loop: at most 400 steps (a year of dailies) so a stale event cannot spin.
  for (let k = 0; next && clock && next <= clock && k < 400; k++) next = step(next);
  return next && (!clock || next > clock) ? next : null;
}

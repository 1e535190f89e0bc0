import type { DateTime } from 'luxon';
import { isoOut } from './luxon-time';

/**
 * Study-planning parts of the learning-mastery compiler: per-concept mastery from the learner's
 * ledger and the expanding-interval review cadence. Dates are computed with luxon in the caller's
 * zone (wall-clock time kept across DST changes); without a `now` the cadence is day offsets.
 */
export interface LedgerLike {
  concept: string;
  attempts: number;
  correct: number;
  last_reviewed?: DateTime | null;
  confidence?: number;
}

export interface ConceptMastery {
  score: number;
  attempts: number;
  matched: boolean;
  retention: number | null;
  accuracy: number | null;
}

/** Laplace-smoothed accuracy, blended with self-rated confidence, decayed by time since review. */
export function conceptMastery(entry: LedgerLike | undefined, now: DateTime | null): ConceptMastery {
  if (!entry) return { score: 0, attempts: 0, matched: false, retention: null, accuracy: null };
  const attempts = Math.max(entry.attempts, entry.correct);
  let accuracy = (Math.min(entry.correct, attempts) + 1) / (attempts + 2);
  if (entry.confidence !== undefined) accuracy = 0.8 * accuracy + 0.2 * entry.confidence;
  let retention: number | null = null;
  if (now && entry.last_reviewed) {
    const days = Math.max(0, now.diff(entry.last_reviewed, 'days').days);
    // Memory half-life grows with practice: ~5 days for a new item, longer with attempts.
    const halfLife = 5 * (1 + Math.log2(1 + attempts));
    retention = Math.pow(0.5, days / halfLife);
  }
  const score = accuracy * (retention === null ? 1 : 0.4 + 0.6 * retention);
  return {
    score: round(score),
    attempts,
    matched: true,
    retention: retention === null ? null : round(retention),
    accuracy: round(accuracy),
  };
}

export function round(x: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

export interface CadenceConcept {
  id: string;
  mastery: number;
}

export interface CadenceSession {
  index: number;
  day_offset: number;
  at: string | null;
  concept_ids: string[];
}

/**
 * Expanding review intervals per concept (weak concepts start at 1 day, strong at 4; each gap
 * grows x2.2), merged into sessions by day. Day 0 is the first study session. With a deadline the
 * last session is the day before it (or the same day, earlier in the day), and no session is
 * scheduled after it. `maxSessions` keeps the first sessions plus the final review.
 */
export function reviewCadence(opts: {
  concepts: CadenceConcept[];
  base: DateTime | null;
  deadline: DateTime | null;
  maxSessions: number;
  defaultHorizonDays?: number;
}): { sessions: CadenceSession[]; horizonDays: number | null } {
  const { concepts, base, deadline, maxSessions } = opts;
  let horizon = opts.defaultHorizonDays ?? 28;
  let hasDeadline = false;
  if (base && deadline) {
    hasDeadline = true;
    horizon = Math.floor(deadline.diff(base, 'days').days);
    if (deadline <= base) return { sessions: [], horizonDays: Math.floor(deadline.diff(base, 'days').days) };
  }
  const allowed = (o: number) => {
    if (o < 0 || o > horizon) return false;
    if (hasDeadline && base && deadline) return base.plus({ days: o }) < deadline;
    return true;
  };
  const byDay = new Map<number, string[]>();
  const add = (day: number, id: string) => {
    const list = byDay.get(day);
    if (list) {
      if (list[list.length - 1] !== id) list.push(id);
    } else byDay.set(day, [id]);
  };
  for (const c of concepts) {
    add(0, c.id);
    let o = c.mastery < 0.3 ? 1 : c.mastery < 0.7 ? 2 : 4;
    while (allowed(o)) {
      add(o, c.id);
      o = Math.max(o + 1, Math.round(o * 2.2));
    }
  }
  if (hasDeadline) {
    let last = horizon;
    while (last > 0 && !allowed(last)) last--;
    if (last > 0) for (const c of concepts) add(last, c.id);
  }
  let days = [...byDay.keys()].sort((a, b) => a - b);
  if (days.length > maxSessions)
    days = maxSessions === 1 ? [days[0]] : [...days.slice(0, maxSessions - 1), days[days.length - 1]];
  const sessions = days.map((d, index) => ({
    index,
    day_offset: d,
    at: base ? isoOut(base.plus({ days: d })) : null,
    concept_ids: [...new Set(byDay.get(d)!)],
  }));
  return { sessions, horizonDays: base && deadline ? horizon : null };
}

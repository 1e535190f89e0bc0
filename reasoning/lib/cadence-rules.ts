import type { DateTime } from 'luxon';
import { NUMBER_WORDS } from './text-segments';

/**
 * Text rules for recurrence phrases ("every weekday at 7am", "3x a week", "every 2 days",
 * "mon, wed and fri evenings") and the luxon expansion of the parsed rule into concrete
 * occurrences in the caller's zone.
 */
export interface Cadence {
  frequency: 'daily' | 'weekly' | 'monthly' | 'interval' | 'once';
  interval: number;
  byWeekday: number[]; // 1 = Monday .. 7 = Sunday
  timesPerPeriod: number | null;
  period: 'day' | 'week' | 'month' | null;
  times: string[]; // HH:mm
  durationMinutes: number | null;
  matched: string[];
  assumptions: string[];
}

const DAY_NAMES: [RegExp, number][] = [
  [/\bmon(day)?s?\b/i, 1],
  [/\btue(s|sday)?s?\b/i, 2],
  [/\bwed(nesday)?s?\b/i, 3],
  [/\bthu(rs|rsday)?s?\b/i, 4],
  [/\bfri(day)?s?\b/i, 5],
  [/\bsat(urday)?s?\b/i, 6],
  [/\bsun(day)?s?\b/i, 7],
];
export const WEEKDAY_CODES = ['', 'MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'];
const COUNT: Record<string, number> = { ...NUMBER_WORDS, once: 1, twice: 2, thrice: 3 };
/** Weekdays used when only a count per week is given: spread through the week. */
const SPREAD: Record<number, number[]> = {
  1: [1],
  2: [2, 4],
  3: [1, 3, 5],
  4: [1, 2, 4, 5],
  5: [1, 2, 3, 4, 5],
  6: [1, 2, 3, 4, 5, 6],
  7: [1, 2, 3, 4, 5, 6, 7],
};

const pad = (n: number) => String(n).padStart(2, '0');

export function parseCadence(text: string, fallback: Cadence['frequency']): Cadence {
  const t = ` ${text.toLowerCase()} `;
  const c: Cadence = {
    frequency: fallback,
    interval: 1,
    byWeekday: [],
    timesPerPeriod: null,
    period: null,
    times: [],
    durationMinutes: null,
    matched: [],
    assumptions: [],
  };
  const hit = (re: RegExp) => {
    const m = re.exec(t);
    if (m) c.matched.push(m[0].trim());
    return m;
  };
  let m: RegExpExecArray | null;
  if ((m = hit(/\bevery\s+(other|\d+)\s+(day|week|month)s?\b/))) {
    c.interval = m[1] === 'other' ? 2 : Math.max(1, Math.min(365, Number(m[1])));
    c.frequency = m[2] === 'day' ? 'interval' : m[2] === 'week' ? 'weekly' : 'monthly';
  } else if (
    (m = hit(
      /\b(\d+|once|twice|thrice|one|two|three|four|five|six|seven)\s*(?:x|times)?\s*(?:a|per|each|\/)\s*(day|week|month)\b/,
    ))
  ) {
    c.timesPerPeriod = Math.max(1, Math.min(24, COUNT[m[1]] ?? Number(m[1])));
    c.period = m[2] as 'day' | 'week' | 'month';
    c.frequency = c.period === 'day' ? 'daily' : c.period === 'week' ? 'weekly' : 'monthly';
  } else if (hit(/\b(every\s*day|daily|each day|every morning|every evening|every night|nightly)\b/))
    c.frequency = 'daily';
  else if (hit(/\b(weekly|every week|once a week)\b/)) c.frequency = 'weekly';
  else if (hit(/\b(monthly|every month)\b/)) c.frequency = 'monthly';
  if (hit(/\b(weekdays|every weekday|workdays|work days)\b/)) [c.frequency, c.byWeekday] = ['weekly', [1, 2, 3, 4, 5]];
  else if (hit(/\bweekends?\b/)) [c.frequency, c.byWeekday] = ['weekly', [6, 7]];
  else {
    const days = DAY_NAMES.filter(([re]) => re.test(t)).map(([, d]) => d);
    if (days.length) {
      c.byWeekday = days;
      c.matched.push(days.map((d) => WEEKDAY_CODES[d]).join(','));
      if (c.frequency !== 'monthly') c.frequency = 'weekly';
    }
  }
  if (c.frequency === 'weekly' && !c.byWeekday.length && c.period === 'week' && c.timesPerPeriod)
    c.byWeekday = SPREAD[Math.min(7, c.timesPerPeriod)];
  // Times of day.
  const timeRe =
    /\b(?:at\s+)?(\d{1,2})(?::(\d{2}))?\s*(am|pm)\b|\b(?:at\s+)(\d{1,2})(?::(\d{2}))?\b|\b(\d{1,2}):(\d{2})\b/g;
  for (const tm of t.matchAll(timeRe)) {
    let h = Number(tm[1] ?? tm[4] ?? tm[6]);
    const min = Number(tm[2] ?? tm[5] ?? tm[7] ?? 0);
    if (tm[3] === 'pm' && h < 12) h += 12;
    if (tm[3] === 'am' && h === 12) h = 0;
    if (h > 23 || min > 59) continue;
    c.times.push(`${pad(h)}:${pad(min)}`);
    c.matched.push(tm[0].trim());
    if (c.times.length >= 6) break;
  }
  if (!c.times.length) {
    const part = hit(/\b(morning|noon|lunch|afternoon|evening|night)s?\b/);
    if (part) {
      const map: Record<string, string> = {
        morning: '07:30',
        noon: '12:00',
        lunch: '12:30',
        afternoon: '15:00',
        evening: '19:00',
        night: '21:30',
      };
      c.times.push(map[part[1]]);
      c.assumptions.push(`"${part[1]}" read as ${map[part[1]]}`);
    }
  }
  if (c.period === 'day' && c.timesPerPeriod && c.timesPerPeriod > 1 && c.times.length < c.timesPerPeriod) {
    // Spread the daily repetitions between 08:00 and 20:00.
    c.times = Array.from({ length: c.timesPerPeriod }, (_, k) => {
      const minutes = 8 * 60 + Math.round((k * 12 * 60) / Math.max(1, c.timesPerPeriod! - 1));
      return `${pad(Math.floor(minutes / 60))}:${pad(minutes % 60)}`;
    });
    c.assumptions.push(`${c.timesPerPeriod} daily repetitions spread between 08:00 and 20:00`);
  }
  c.times = [...new Set(c.times)].sort();
  const dur = /\bfor\s+(\d+)\s*(minutes?|mins?|hours?|h)\b/.exec(t);
  if (dur) c.durationMinutes = Math.min(1440, Number(dur[1]) * (/^h/.test(dur[2]) ? 60 : 1));
  return c;
}

/** RFC 5545 RRULE for the cadence (null for one-off). */
export function toRRule(c: Cadence): string | null {
  if (c.frequency === 'once') return null;
  const parts: string[] = [];
  if (c.frequency === 'interval') parts.push('FREQ=DAILY', `INTERVAL=${c.interval}`);
  else parts.push(`FREQ=${c.frequency.toUpperCase()}`, ...(c.interval > 1 ? [`INTERVAL=${c.interval}`] : []));
  if (c.byWeekday.length) parts.push(`BYDAY=${c.byWeekday.map((d) => WEEKDAY_CODES[d]).join(',')}`);
  if (c.times.length) {
    parts.push(`BYHOUR=${[...new Set(c.times.map((x) => Number(x.slice(0, 2))))].join(',')}`);
    parts.push(`BYMINUTE=${[...new Set(c.times.map((x) => Number(x.slice(3))))].join(',')}`);
  }
  return parts.join(';');
}

/** The next `max` occurrences strictly after `now`, scanning at most 400 days ahead. */
export function nextOccurrences(c: Cadence, now: DateTime, max: number): DateTime[] {
  if (c.frequency === 'once') return [];
  const times = c.times.length ? c.times : [now.toFormat('HH:mm')];
  const out: DateTime[] = [];
  const start = now.startOf('day');
  for (let d = 0; d < 400 && out.length < max; d++) {
    const day = start.plus({ days: d });
    let ok: boolean;
    if (c.frequency === 'interval') ok = d % c.interval === 0;
    else if (c.frequency === 'monthly')
      ok =
        day.day === Math.min(now.day, day.daysInMonth ?? 28) &&
        Math.round(day.diff(start.startOf('month'), 'months').months) % c.interval === 0;
    else if (c.frequency === 'weekly') {
      const weekIdx = Math.floor(day.startOf('week').diff(start.startOf('week'), 'weeks').weeks + 1e-9);
      ok =
        (c.byWeekday.length ? c.byWeekday.includes(day.weekday) : day.weekday === now.weekday) &&
        weekIdx % c.interval === 0;
    } else ok = !c.byWeekday.length || c.byWeekday.includes(day.weekday);
    if (!ok) continue;
    for (const hm of times) {
      const at = day.set({ hour: Number(hm.slice(0, 2)), minute: Number(hm.slice(3)), second: 0, millisecond: 0 });
      if (at > now && out.length < max) out.push(at);
    }
  }
  return out;
}

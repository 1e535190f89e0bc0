import { DateTime } from 'luxon';
import { isoOut, parseInstant } from './luxon-time';
import { NUMBER_WORDS } from './text-segments';

/**
 * Due-date hints in free text ("by Friday", "tomorrow", "by 2026-05-01", "end of week",
 * "in 3 days", "May 4"). Extraction is pure text rules; resolution uses luxon against a base
 * instant the caller supplies (a message time or a request `now`). Relative hints without a
 * base stay unresolved: we never read the clock.
 */
const WEEKDAYS: Record<string, number> = {
  monday: 1,
  mon: 1,
  tuesday: 2,
  tue: 2,
  tues: 2,
  wednesday: 3,
  wed: 3,
  thursday: 4,
  thu: 4,
  thurs: 4,
  friday: 5,
  fri: 5,
  saturday: 6,
  sunday: 7,
};
const MONTHS: Record<string, number> = {
  jan: 1,
  feb: 2,
  mar: 3,
  apr: 4,
  may: 5,
  jun: 6,
  jul: 7,
  aug: 8,
  sep: 9,
  sept: 9,
  oct: 10,
  nov: 11,
  dec: 12,
};
const NUM: Record<string, number> = { ...NUMBER_WORDS, a: 1, an: 1 };

type Parsed =
  | { kind: 'iso'; value: string }
  | { kind: 'weekday'; wd: number; next: boolean }
  | { kind: 'in'; n: number; unit: 'hours' | 'days' | 'weeks' }
  | { kind: 'day'; offset: number; hour?: number }
  | { kind: 'eow' | 'eom' | 'next_week' | 'next_month' }
  | { kind: 'monthday'; month: number; day: number };

export interface DueHint {
  /** The literal phrase as written. */
  hint: string;
  parsed: Parsed;
}

const PREP = String.raw`(?:(?:by|before|on|until|till|due|no later than|for)\s+)?`;
const MONTH_RE = String.raw`(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)`;
const WD_RE = String.raw`(monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tues?|wed|thu(?:rs)?|fri)`;

const RULES: { re: RegExp; make: (m: RegExpExecArray) => Parsed | null }[] = [
  {
    re: new RegExp(
      String.raw`\b${PREP}(\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?)`,
      'i',
    ),
    make: (m) => ({ kind: 'iso', value: m[1].replace(' ', 'T') }),
  },
  {
    re: /\b(?:(?:by|before|until|till|at|due)\s+)?(?:the\s+)?(end of (?:the )?(day|week|month)|eod|cob|eow|eom)\b/i,
    make: (m) => {
      const w = (m[2] ?? m[1]).toLowerCase();
      if (w === 'day' || w === 'eod' || w === 'cob') return { kind: 'day', offset: 0, hour: 17 };
      return { kind: w === 'week' || w === 'eow' ? 'eow' : 'eom' };
    },
  },
  {
    re: new RegExp(String.raw`\b${PREP}(next\s+)?${WD_RE}\b`, 'i'),
    make: (m) => ({ kind: 'weekday', wd: WEEKDAYS[m[2].toLowerCase()], next: !!m[1] }),
  },
  {
    re: /\b(?:(?:by|before|until|till|for)\s+)?(today|tonight|tomorrow|this afternoon|this evening|next week|next month)\b/i,
    make: (m) => {
      const w = m[1].toLowerCase();
      if (w === 'tomorrow') return { kind: 'day', offset: 1 };
      if (w === 'next week') return { kind: 'next_week' };
      if (w === 'next month') return { kind: 'next_month' };
      if (w === 'today') return { kind: 'day', offset: 0 };
      return { kind: 'day', offset: 0, hour: w === 'this afternoon' ? 17 : 21 };
    },
  },
  {
    re: /\b(?:with)?in\s+(\d{1,3}|an?|one|two|three|four|five|six|seven|ten)\s+(hours?|days?|weeks?)\b/i,
    make: (m) => {
      const n = /^\d+$/.test(m[1]) ? Number(m[1]) : NUM[m[1].toLowerCase()];
      const u = m[2].toLowerCase().replace(/s?$/, 's') as 'hours' | 'days' | 'weeks';
      return { kind: 'in', n, unit: u };
    },
  },
  {
    re: new RegExp(String.raw`\b${PREP}${MONTH_RE}\.?\s+(\d{1,2})(?:st|nd|rd|th)?\b`, 'i'),
    make: (m) => ({ kind: 'monthday', month: MONTHS[m[1].slice(0, 3).toLowerCase()], day: Number(m[2]) }),
  },
  {
    re: new RegExp(String.raw`\b${PREP}(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?${MONTH_RE}\b`, 'i'),
    make: (m) => ({ kind: 'monthday', month: MONTHS[m[2].slice(0, 3).toLowerCase()], day: Number(m[1]) }),
  },
];

/** First due-date phrase in `text` (earliest rule that matches), or null. */
export function extractDueHint(text: string): DueHint | null {
  for (const rule of RULES) {
    const m = rule.re.exec(text);
    if (!m) continue;
    const parsed = rule.make(m);
    if (parsed) return { hint: m[0].trim(), parsed };
  }
  return null;
}

export interface ResolvedDue {
  hint: string;
  /** Calendar date (yyyy-MM-dd) of the deadline, or null when it could not be resolved. */
  date: string | null;
  /** Deadline instant (ISO with offset): end of that day unless the hint names an hour. */
  at: string | null;
  /** What the resolution is based on. */
  basis: 'absolute' | 'message_time' | 'request_now' | null;
}

function endOfDay(d: DateTime, hour?: number): DateTime {
  return hour === undefined ? d.endOf('day').set({ millisecond: 0 }) : d.startOf('day').set({ hour });
}

/** Deadline instant for a parsed hint, relative to `base` (may be null for relative hints). */
export function deadlineOf(p: Parsed, base: DateTime | null, timezone?: string): DateTime | null {
  if (p.kind === 'iso') {
    const dt = parseInstant(p.value, timezone ?? base?.zoneName ?? undefined);
    if (!dt) return null;
    return p.value.length <= 10 ? endOfDay(dt) : dt;
  }
  if (!base) return null;
  switch (p.kind) {
    case 'day':
      return endOfDay(base.plus({ days: p.offset }), p.hour);
    case 'in':
      return p.unit === 'hours'
        ? base.plus({ hours: p.n }).set({ millisecond: 0 })
        : endOfDay(base.plus({ [p.unit]: p.n }));
    case 'weekday': {
      let delta = (p.wd - base.weekday + 7) % 7;
      if (p.next) delta += delta === 0 ? 7 : p.wd > base.weekday ? 7 : 0;
      return endOfDay(base.plus({ days: delta }));
    }
    case 'eow': {
      const friday = base.set({ weekday: 5 });
      return endOfDay(friday < base.startOf('day') ? base : friday);
    }
    case 'eom':
      return endOfDay(base.endOf('month'));
    case 'next_week':
      return endOfDay(base.startOf('week').plus({ weeks: 1 }).set({ weekday: 5 }));
    case 'next_month':
      return endOfDay(base.plus({ months: 1 }).endOf('month'));
    case 'monthday': {
      let d = base.set({ month: p.month, day: p.day });
      if (!d.isValid || d.month !== p.month) return null;
      if (d.startOf('day') < base.startOf('day')) d = d.plus({ years: 1 });
      return endOfDay(d);
    }
  }
}

/** Resolve a hint against an optional base; `basisLabel` names where the base came from. */
export function resolveDue(
  h: DueHint,
  base: DateTime | null,
  basisLabel: 'message_time' | 'request_now',
  timezone?: string,
): ResolvedDue {
  const dl = deadlineOf(h.parsed, base, timezone);
  if (!dl) return { hint: h.hint, date: null, at: null, basis: null };
  return {
    hint: h.hint,
    date: dl.toISODate(),
    at: isoOut(dl),
    basis: h.parsed.kind === 'iso' ? 'absolute' : basisLabel,
  };
}

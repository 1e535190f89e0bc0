import { DateTime, Duration } from 'luxon';
import type {
  TemporalCoordinateRequest as Req,
  TemporalCoordinateResponse as Res,
} from '../../schema/reasoning/temporal-coordinate';
import { parseInstant } from './luxon-time';

/**
 * Free-time model for /temporal/coordinate: fixed events are parsed and merged, available
 * windows are clipped to the horizon and cut around the (optionally buffered) events, giving
 * disjoint, time-sorted segments. All arithmetic is in epoch milliseconds from luxon-parsed
 * instants, and every output instant is rendered back through luxon in the window's zone.
 */
export type Level = 0 | 1 | 2;
export type Conflict = Res['conflicts'][number];

export const levelOf = (s?: string | null): Level => {
  const v = (s ?? '').toLowerCase();
  if (/\b(low|tired|drained|light|shallow)\b/.test(v)) return 0;
  if (/\b(high|peak|deep|focus(ed)?|sharp)\b/.test(v)) return 2;
  return 1;
};

export interface Segment {
  window: number | null;
  label: string | null;
  start: number;
  end: number;
  cursor: number;
  energy: Level;
  zone: string;
}

export interface Timeline {
  segments: Segment[];
  floating: { window: number; label: string | null; capacity: number; energy: Level }[];
  /** Remaining minute budget per available[] index (Infinity when the window gives no minutes cap). */
  budget: number[];
  freeMinutes: number;
  horizonStart: number | null;
  horizonEnd: number | null;
}

const MIN = 60_000;

/** End of the planning horizon relative to `base`; ISO values are absolute. */
export function horizonEnd(h: string | undefined, base: DateTime | null, tz?: string): DateTime | null {
  if (!h) return null;
  const v = h.trim().toLowerCase();
  const iso = parseInstant(h, tz ?? base?.zoneName ?? undefined);
  if (iso) return v.length <= 10 ? iso.endOf('day') : iso;
  if (!base) return null;
  if (v === 'today' || v === 'day') return base.endOf('day');
  if (v === 'tomorrow') return base.plus({ days: 1 }).endOf('day');
  if (v === 'week' || v === 'this week') return base.endOf('week');
  if (v === 'next week') return base.plus({ weeks: 1 }).endOf('week');
  if (v === 'month' || v === 'this month') return base.endOf('month');
  const m = /^(\d{1,3})\s*(h|hours?|d|days?|w|weeks?)$/.exec(v);
  if (!m) return null;
  const unit = m[2][0] === 'h' ? 'hours' : m[2][0] === 'd' ? 'days' : 'weeks';
  return base.plus(Duration.fromObject({ [unit]: Number(m[1]) }));
}

function span(
  start?: string,
  end?: string,
  minutes?: number,
  tz?: string,
): { s: DateTime; e: DateTime } | 'invalid' | null {
  if (!start && !end) return null;
  const s = parseInstant(start, tz);
  let e = parseInstant(end, tz);
  if (s && !e && !end && minutes !== undefined) e = s.plus({ minutes });
  if (!s || !e || e <= s) return 'invalid';
  return { s, e };
}

export function buildTimeline(
  input: Req,
  tz: string | undefined,
  now: DateTime | null,
  hEnd: DateTime | null,
  protectFocus: boolean,
  conflict: (c: Omit<Conflict, 'id'>) => void,
): Timeline {
  // Fixed events: parse, sort, report overlaps with a sweep, merge into disjoint busy intervals.
  const events: { i: number; s: number; e: number }[] = [];
  (input.fixed_events ?? []).forEach((ev, i) => {
    const sp = span(ev.start, ev.end, ev.minutes, tz);
    if (sp === 'invalid')
      conflict({
        kind: 'invalid_time',
        severity: 'warning',
        detail: `fixed_events[${i}] has an unreadable or empty time range`,
        task_ids: [],
        event_indexes: [i],
        window_indexes: [],
      });
    else if (sp) events.push({ i, s: sp.s.toMillis(), e: sp.e.toMillis() });
  });
  events.sort((a, b) => a.s - b.s || a.e - b.e || a.i - b.i);
  const busy: { s: number; e: number; idx: number[] }[] = [];
  let maxEv: { i: number; e: number } | null = null;
  for (const ev of events) {
    if (maxEv && ev.s < maxEv.e) {
      const a = input.fixed_events![maxEv.i].title ?? `event ${maxEv.i}`;
      const b = input.fixed_events![ev.i].title ?? `event ${ev.i}`;
      conflict({
        kind: 'fixed_overlap',
        severity: 'error',
        detail: `"${a}" overlaps "${b}" by ${Math.round((Math.min(maxEv.e, ev.e) - ev.s) / MIN)} min`,
        task_ids: [],
        event_indexes: [maxEv.i, ev.i],
        window_indexes: [],
      });
    }
    if (!maxEv || ev.e > maxEv.e) maxEv = { i: ev.i, e: ev.e };
    const pad = protectFocus ? 10 * MIN : 0;
    const last = busy[busy.length - 1];
    if (last && ev.s - pad <= last.e) {
      last.e = Math.max(last.e, ev.e + pad);
      if (last.idx.length < 5) last.idx.push(ev.i);
    } else busy.push({ s: ev.s - pad, e: ev.e + pad, idx: [ev.i] });
  }

  const byIdx = new Map(events.map((ev) => [ev.i, ev]));
  const nowMs = now?.toMillis() ?? null;
  const endMs = hEnd?.toMillis() ?? null;
  const budget: number[] = [];
  const floating: Timeline['floating'] = [];
  const raw: Segment[] = [];
  const defaultEnergy = levelOf(input.energy);
  const windows = input.available ?? [];
  const sources: { window: number | null; label: string | null; s: DateTime; e: DateTime; energy: Level }[] = [];
  windows.forEach((w, i) => {
    budget.push(w.minutes ?? Number.POSITIVE_INFINITY);
    const sp = span(w.start, w.end, w.minutes, tz);
    const energy = w.energy ? levelOf(w.energy) : defaultEnergy;
    if (sp === 'invalid')
      conflict({
        kind: 'invalid_time',
        severity: 'warning',
        detail: `available[${i}] has an unreadable or empty time range`,
        task_ids: [],
        event_indexes: [],
        window_indexes: [i],
      });
    else if (sp) sources.push({ window: i, label: w.label ?? null, s: sp.s, e: sp.e, energy });
    else if (w.minutes) floating.push({ window: i, label: w.label ?? null, capacity: w.minutes, energy });
  });
  if (!windows.length && now) {
    sources.push({ window: null, label: 'horizon', s: now, e: hEnd ?? now.endOf('day'), energy: defaultEnergy });
  }
  for (const src of sources) {
    let s = src.s.toMillis();
    let e = src.e.toMillis();
    if (nowMs !== null) s = Math.max(s, nowMs);
    if (endMs !== null) e = Math.min(e, endMs);
    if (e <= s) continue;
    const zone = src.s.zoneName ?? 'UTC';
    let k = lowerBoundBy(busy, s, (b) => b.e);
    const hit: number[] = [];
    for (; k < busy.length && busy[k].s < e; k++) {
      const b = busy[k];
      if (b.s > s)
        raw.push({ window: src.window, label: src.label, start: s, end: b.s, cursor: s, energy: src.energy, zone });
      s = Math.max(s, b.e);
      for (const x of b.idx) if (hit.length < 5 && !hit.includes(x)) hit.push(x);
    }
    if (s < e)
      raw.push({ window: src.window, label: src.label, start: s, end: e, cursor: s, energy: src.energy, zone });
    if (hit.length && src.window !== null) {
      const rawHit = hit.filter((x) => {
        const ev = byIdx.get(x);
        return !!ev && ev.s < src.e.toMillis() && ev.e > src.s.toMillis();
      });
      if (rawHit.length)
        conflict({
          kind: 'window_overlaps_fixed',
          severity: 'warning',
          detail: `available[${src.window}] overlaps ${rawHit.length} fixed event(s); the overlap is not used`,
          task_ids: [],
          event_indexes: rawHit,
          window_indexes: [src.window],
        });
    }
  }
  // Disjoint segments: sort by start and clip each to the previous end (overlapping windows do not double-count).
  raw.sort((a, b) => a.start - b.start || a.end - b.end || (a.window ?? -1) - (b.window ?? -1));
  const segments: Segment[] = [];
  let prevEnd = Number.NEGATIVE_INFINITY;
  for (const seg of raw) {
    const s = Math.max(seg.start, prevEnd);
    if (seg.end - s >= MIN) segments.push({ ...seg, start: s, cursor: s });
    prevEnd = Math.max(prevEnd, seg.end);
  }
  const perWindow = new Map<number | null, number>();
  for (const seg of segments) perWindow.set(seg.window, (perWindow.get(seg.window) ?? 0) + (seg.end - seg.start) / MIN);
  let free = 0;
  for (const [w, m] of perWindow) free += w === null ? m : Math.min(m, budget[w]);
  for (const f of floating) free += f.capacity;
  const horizonStart = nowMs ?? (segments.length ? segments[0].start : null);
  return { segments, floating, budget, freeMinutes: Math.round(free), horizonStart, horizonEnd: endMs };
}

/** First index whose key is > v (array sorted by key). */
export function lowerBoundBy<T>(a: T[], v: number, key: (x: T) => number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (key(a[mid]) <= v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export const renderTime = (ms: number, zone: string): string => {
  const dt = DateTime.fromMillis(ms, { zone });
  return dt.toISO({ suppressMilliseconds: true }) ?? dt.toUTC().toISO()!;
};

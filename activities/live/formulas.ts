/**
 * The live-state formulas (pure and deterministic: same signals, same state). Documented in
 * docs/decisions.md ("Live plane and MCP"). Every input is an aggregate over all tenants; no
 * tenant data reaches the output.
 */

export interface WindowSignals {
  /** Mean lexicon sentiment of the window's scored texts, in [-1, 1], and how many were scored. */
  sentiment: number;
  sentimentN: number;
  /** Requests (user chat messages, tasks, goals, learn jobs, swarm runs started) per minute. */
  requestsPerMin: number;
  /** Jobs finished per minute, and the share of them that failed. */
  jobsPerMin: number;
  errorRate: number;
}

export interface EriState {
  eri: number;
  ers: number;
  pacing: 'calm' | 'steady' | 'brisk' | 'surging';
  volatility: number;
  coherence: number;
  musical_key: string;
  bpm: number;
  arte_state: 'still' | 'flowing' | 'vivid' | 'stormy';
  arte_intensity: number;
  arte_palette: string[];
  drift: {
    baseline_eri: number | null;
    baseline_samples: number;
    delta: number;
    z: number;
    drifting: boolean;
    direction: 'up' | 'down' | 'none';
  };
  signals: {
    sentiment: number;
    sentiment_samples: number;
    requests_per_min: number;
    jobs_per_min: number;
    error_rate: number;
  };
}

const clamp01 = (x: number) => Math.min(1, Math.max(0, x));
const r3 = (x: number) => Math.round(x * 1000) / 1000;
const NOTES = ['C', 'C#', 'D', 'D#', 'E', 'F', 'F#', 'G', 'G#', 'A', 'A#', 'B'];

function mean(xs: readonly number[]): number {
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0;
}
function stddev(xs: readonly number[]): number {
  if (xs.length < 2) return 0;
  const m = mean(xs);
  return Math.sqrt(mean(xs.map((x) => (x - m) ** 2)));
}

function hslHex(h: number, s: number, l: number): string {
  const a = (s / 100) * Math.min(l / 100, 1 - l / 100);
  const f = (n: number) => {
    const k = (n + h / 30) % 12;
    const c = l / 100 - a * Math.max(-1, Math.min(k - 3, 9 - k, 1));
    return Math.round(c * 255)
      .toString(16)
      .padStart(2, '0');
  };
  return `#${f(0)}${f(8)}${f(4)}`;
}

/**
 * ERI from one window's signals, the recent ERI values (newest first, for volatility) and the
 * rolling baseline (ERI values of the previous 24 h, for drift).
 */
export function computeEri(s: WindowSignals, recent: readonly number[], baseline: readonly number[]): EriState {
  const confidence = s.sentimentN / (s.sentimentN + 5);
  const valence = Math.max(-1, Math.min(1, s.sentiment)) * confidence;
  const health = 1 - clamp01(4 * s.errorRate);
  const activity = s.requestsPerMin / (s.requestsPerMin + 5);
  const eri = r3(clamp01(0.5 + 0.3 * valence + 0.2 * (health - 0.5) + 0.1 * (activity - 0.5)));
  const volatility = r3(stddev([eri, ...recent.slice(0, 11)]));
  const coherence = r3(clamp01(1 - Math.abs(valence - (2 * health - 1)) / 2));
  const pacing =
    s.requestsPerMin < 1 ? 'calm' : s.requestsPerMin < 10 ? 'steady' : s.requestsPerMin < 60 ? 'brisk' : 'surging';
  const intensity = r3(clamp01(0.6 * activity + 0.4 * Math.abs(valence)));
  const hue = Math.round(220 - 180 * eri);
  const sat = Math.round(40 + 40 * intensity);
  const baseMean = baseline.length ? mean(baseline) : null;
  const sd = Math.max(0.02, stddev(baseline));
  const delta = baseMean === null ? 0 : r3(eri - baseMean);
  const z = baseMean === null ? 0 : Math.round((delta / sd) * 100) / 100;
  const drifting = baseline.length >= 6 && Math.abs(z) >= 2;
  return {
    eri,
    ers: Math.round(eri * 100),
    pacing,
    volatility,
    coherence,
    musical_key: `${NOTES[Math.min(11, Math.floor(eri * 12))]} ${valence >= 0 ? 'major' : 'minor'}`,
    bpm: Math.round(60 + 80 * activity + 100 * volatility),
    arte_state:
      volatility > 0.15 || health < 0.5 ? 'stormy' : eri >= 0.65 ? 'vivid' : activity < 0.1 ? 'still' : 'flowing',
    arte_intensity: intensity,
    arte_palette: [45, 60, 75].map((l) => hslHex(hue, sat, l)),
    drift: {
      baseline_eri: baseMean === null ? null : r3(baseMean),
      baseline_samples: baseline.length,
      delta,
      z,
      drifting,
      direction: drifting ? (delta > 0 ? 'up' : 'down') : 'none',
    },
    signals: {
      sentiment: r3(s.sentiment),
      sentiment_samples: s.sentimentN,
      requests_per_min: r3(s.requestsPerMin),
      jobs_per_min: r3(s.jobsPerMin),
      error_rate: r3(s.errorRate),
    },
  };
}

export interface DailyAggregate {
  day: string;
  sentimentSum: number;
  sentimentN: number;
  requests: number;
  jobsDone: number;
  errors: number;
  eriSum: number;
  eriN: number;
}

export interface AeciState {
  index: number;
  category: 'flourishing' | 'steady' | 'mixed' | 'strained' | 'distressed';
  stability_score: number;
  sentiment_momentum: number;
  ui_hue_shift: number;
  tone_bias: 'encouraging' | 'neutral' | 'gentle';
  week_start: string;
  week_end: string;
  days_with_data: number;
}

/** AECI over the 7 days ending `weekEnd` (inclusive) from stored daily aggregates (any order; others ignored). */
export function computeAeci(days: readonly DailyAggregate[], weekEnd: string): AeciState {
  const end = Date.parse(`${weekEnd}T00:00:00Z`);
  const dayKey = (i: number) => new Date(end - i * 86_400_000).toISOString().slice(0, 10);
  const week = Array.from({ length: 7 }, (_, i) => days.find((d) => d.day === dayKey(i)));
  const eriDays = week.filter((d): d is DailyAggregate => !!d && d.eriN > 0).map((d) => d.eriSum / d.eriN);
  const sentiment = (ds: Array<DailyAggregate | undefined>) => {
    const n = ds.reduce((a, d) => a + (d?.sentimentN ?? 0), 0);
    return n ? ds.reduce((a, d) => a + (d?.sentimentSum ?? 0), 0) / n : 0;
  };
  const index = Math.round(100 * (eriDays.length ? mean(eriDays) : 0.5));
  const momentum = r3(sentiment(week.slice(0, 3)) - sentiment(week.slice(3)));
  return {
    index,
    category:
      index >= 70
        ? 'flourishing'
        : index >= 55
          ? 'steady'
          : index >= 45
            ? 'mixed'
            : index >= 30
              ? 'strained'
              : 'distressed',
    stability_score: r3(1 - clamp01(2 * stddev(eriDays))),
    sentiment_momentum: momentum,
    ui_hue_shift: Math.round(30 * Math.max(-1, Math.min(1, momentum))),
    tone_bias: momentum > 0.1 ? 'encouraging' : momentum < -0.1 ? 'gentle' : 'neutral',
    week_start: dayKey(6),
    week_end: weekEnd,
    days_with_data: week.filter((d) => !!d && (d.eriN > 0 || d.sentimentN > 0 || d.requests > 0)).length,
  };
}

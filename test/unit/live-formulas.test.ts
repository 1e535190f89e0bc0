import { computeAeci, computeEri, type DailyAggregate } from '../../activities/live/formulas';
import { sentimentOf, sentimentOfAll } from '../../activities/live/lexicon';
import { AeciResponse, EriResponse } from '../../schema/live';

/** A recorded signal set: half-positive chat, 5 requests/min, no failures. */
const SIGNALS = { sentiment: 0.5, sentimentN: 5, requestsPerMin: 5, jobsPerMin: 1, errorRate: 0 };

test('lexicon: positive, negative, negated and neutral texts', () => {
  expect(sentimentOf('This is great, thanks!')).toBe(1);
  expect(sentimentOf('The build is broken and slow')).toBe(-1);
  expect(sentimentOf('this is not good')).toBe(-1);
  expect(sentimentOf('great but broken')).toBe(0);
  expect(sentimentOf('the meeting is at noon')).toBeUndefined();
  expect(sentimentOfAll(['great', 'terrible', 'hello'])).toEqual({ mean: 0, n: 2 });
});

test('ERI of a recorded signal set follows the documented formula, every field present', () => {
  const s = computeEri(SIGNALS, [0.6, 0.62], []);
  // confidence 5/10 → valence 0.25; health 1; activity 5/10 = 0.5 → 0.5 + 0.075 + 0.1 + 0 = 0.675
  expect(s.eri).toBe(0.675);
  expect(s.ers).toBe(Math.round(0.675 * 100));
  expect(s.pacing).toBe('steady');
  expect(s.musical_key).toBe('G# major');
  expect(s.arte_state).toBe('vivid');
  expect(s.drift).toEqual({
    baseline_eri: null,
    baseline_samples: 0,
    delta: 0,
    z: 0,
    drifting: false,
    direction: 'none',
  });
  expect(s.arte_palette).toHaveLength(3);
  for (const c of s.arte_palette) expect(c).toMatch(/^#[0-9a-f]{6}$/);
  expect(EriResponse.safeParse({ ...s, sampled_at: null, window_minutes: 15 }).success).toBe(true);
  // Deterministic: the same inputs give the same state.
  expect(computeEri(SIGNALS, [0.6, 0.62], [])).toEqual(s);
});

test('drift: a drop far below a steady 24 h baseline is flagged down', () => {
  const baseline = [0.6, 0.61, 0.59, 0.6, 0.6, 0.61, 0.59];
  const s = computeEri(
    { sentiment: -1, sentimentN: 20, requestsPerMin: 2, jobsPerMin: 1, errorRate: 0.5 },
    [],
    baseline,
  );
  expect(s.eri).toBeLessThan(0.3);
  expect(s.drift).toMatchObject({ drifting: true, direction: 'down', baseline_samples: 7 });
  expect(s.drift.z).toBeLessThanOrEqual(-2);
  expect(s.arte_state).toBe('stormy');
  expect(s.musical_key).toMatch(/minor$/);
  const few = computeEri(
    { sentiment: -1, sentimentN: 20, requestsPerMin: 2, jobsPerMin: 1, errorRate: 0.5 },
    [],
    baseline.slice(0, 5),
  );
  expect(few.drift.drifting).toBe(false);
});

test('AECI from daily aggregates: index, category, momentum and hue follow the formulas', () => {
  const day = (d: string, eri: number, sentiment: number): DailyAggregate => ({
    day: d,
    sentimentSum: sentiment * 10,
    sentimentN: 10,
    requests: 50,
    jobsDone: 5,
    errors: 0,
    eriSum: eri * 60,
    eriN: 60,
  });
  const days = [
    day('2026-11-23', 0.7, 0.6),
    day('2026-11-22', 0.7, 0.6),
    day('2026-11-21', 0.7, 0.6),
    day('2026-11-20', 0.6, 0.1),
    day('2026-11-19', 0.6, 0.1),
    day('2026-11-18', 0.6, 0.1),
    day('2026-11-17', 0.6, 0.1),
    day('2026-11-10', 0.1, -1), // outside the week: ignored
  ];
  const a = computeAeci(days, '2026-11-23');
  expect(a.index).toBe(64); // mean(0.7×3, 0.6×4) = 0.6429
  expect(a.category).toBe('steady');
  expect(a.sentiment_momentum).toBe(0.5);
  expect(a.ui_hue_shift).toBe(15);
  expect(a.tone_bias).toBe('encouraging');
  expect(a.stability_score).toBeCloseTo(1 - 2 * 0.0495, 2);
  expect({ start: a.week_start, end: a.week_end, days: a.days_with_data }).toEqual({
    start: '2026-11-17',
    end: '2026-11-23',
    days: 7,
  });
  expect(AeciResponse.safeParse(a).success).toBe(true);
  const empty = computeAeci([], '2026-11-23');
  expect(empty).toMatchObject({
    index: 50,
    category: 'mixed',
    sentiment_momentum: 0,
    tone_bias: 'neutral',
    days_with_data: 0,
  });
});

import fc from 'fast-check';
import { DateTime } from 'luxon';
import { localTime, localTimeUncached } from '../../reasoning/persona';

// The prompt's current time comes from a text cached per zone and minute; it must be luxon's text
// for every instant, name the minute without its seconds (the system message stays the same for a
// minute: upstream prompt caches match it), and luxon must run once a minute per zone, not once a second.

const ZONES = [
  undefined,
  'UTC',
  'Europe/Paris',
  'America/New_York',
  'Asia/Kolkata',
  'Asia/Kathmandu',
  'Australia/Lord_Howe',
  'Pacific/Chatham',
  'America/St_Johns',
  'Not/AZone',
];
// Around daylight-saving changes (Paris, New York, Lord Howe's half-hour shift) and a year end.
const EDGES = [
  Date.UTC(2026, 2, 29, 1, 0, 0),
  Date.UTC(2026, 10, 1, 6, 0, 0),
  Date.UTC(2026, 3, 4, 15, 0, 0),
  Date.UTC(2026, 11, 31, 23, 59, 59),
];

describe('localTime', () => {
  it('gives luxon’s text for every instant, whatever came before', () => {
    const instant = fc.oneof(
      fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2100, 0, 1) }),
      fc.constantFrom(...EDGES).chain((e) => fc.integer({ min: e - 120_000, max: e + 120_000 })),
    );
    // Runs of nearby instants, so the minute's text is reused and crosses minutes and offset changes.
    const run = fc.tuple(instant, fc.array(fc.integer({ min: -90_000, max: 90_000 }), { maxLength: 8 }));
    fc.assert(
      fc.property(fc.constantFrom(...ZONES), run, (zone, [base, steps]) => {
        for (const t of [base, ...steps.map((s) => base + s)]) {
          const d = new Date(t);
          expect(localTime(d, zone)).toBe(localTimeUncached(d, zone));
        }
      }),
      { numRuns: 3_000 },
    );
  });

  it('names the minute, never its seconds: every instant of a minute gets the same text', () => {
    const minute = Date.UTC(2026, 10, 26, 16, 52, 0, 0);
    for (const zone of ZONES) {
      const first = localTimeUncached(new Date(minute), zone);
      for (const t of [minute + 1, minute + 9_000, minute + 9_842, minute + 59_999])
        expect(localTime(new Date(t), zone)).toBe(first);
      expect(first).not.toMatch(/:\d\d:\d\d/);
    }
    expect(localTime(new Date(minute + 9_842))).toBe('Thursday 26 November 2026, 16:52 (UTC, 2026-11-26T16:52Z)');
    expect(localTime(new Date(minute + 9_842), 'Asia/Kolkata')).toBe(
      'Thursday 26 November 2026, 22:22 (Asia/Kolkata, 2026-11-26T22:22+05:30)',
    );
    expect(localTime(new Date(minute + 60_000))).toBe('Thursday 26 November 2026, 16:53 (UTC, 2026-11-26T16:53Z)');
  });

  it('formats with luxon once a minute per zone', () => {
    const start = Date.UTC(2026, 5, 1, 12, 0, 0, 250);
    const last = localTimeUncached(new Date(start + 59_749), 'Asia/Tokyo');
    const spy = jest.spyOn(DateTime, 'fromJSDate');
    try {
      for (let s = 0; s < 60; s++) localTime(new Date(start + s * 1000), 'Asia/Tokyo');
      expect(spy).toHaveBeenCalledTimes(1);
      expect(localTime(new Date(start + 59_749), 'Asia/Tokyo')).toBe(last);
      localTime(new Date(start + 59_750), 'Asia/Tokyo');
      expect(spy).toHaveBeenCalledTimes(2);
    } finally {
      spy.mockRestore();
    }
  });
});

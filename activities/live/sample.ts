import type { Db } from '../store/db';
import { createFlowPrompt, pruneRateLimits, recentDriftPrompt } from '../store/flow';
import {
  dayEri,
  eriValues,
  notifyLive,
  saveDaily,
  saveSample,
  windowCounts,
  windowTexts,
  type LiveSample,
} from '../store/live';
import { computeEri, type WindowSignals } from './formulas';
import { sentimentOfAll } from './lexicon';
import { substrate } from './substrate';

/** Signals are read over this window ending at the sample time. */
export const WINDOW_MINUTES = 15;
const BASELINE_HOURS = 24;
const MAX_TEXTS = 500;

export async function windowSignals(db: Db, from: Date, to: Date): Promise<WindowSignals> {
  const minutes = Math.max(1, (to.getTime() - from.getTime()) / 60_000);
  const [texts, counts] = await Promise.all([windowTexts(db, from, to, MAX_TEXTS), windowCounts(db, from, to)]);
  const s = sentimentOfAll(texts);
  return {
    sentiment: s.mean,
    sentimentN: s.n,
    requestsPerMin: counts.requests / minutes,
    jobsPerMin: counts.jobsDone / minutes,
    errorRate: counts.jobsDone ? counts.errors / counts.jobsDone : 0,
  };
}

function driftPrompt(direction: 'up' | 'down', eri: number, baseline: number): string {
  return direction === 'up'
    ? `The climate is lifting (resonance ${eri} against a baseline of ${baseline}). What is working right now that you want to keep?`
    : `The climate has dipped (resonance ${eri} against a baseline of ${baseline}). What would make the next hour lighter?`;
}

/**
 * One sample (run by the Temporal schedule, once a minute): ERI for the window ending at `at`,
 * stored for that minute, the day's aggregate recomputed, a drift prompt when the ERI drifts from
 * its 24 h baseline (at most one per hour), and a NOTIFY so every replica pushes the frames.
 * Idempotent: the same minute overwrites its sample and the drift prompt id is derived from it.
 */
export async function sampleLive(db: Db, atIso: string): Promise<LiveSample> {
  const at = new Date(Math.floor(Date.parse(atIso) / 60_000) * 60_000);
  const from = new Date(at.getTime() - WINDOW_MINUTES * 60_000);
  const signals = await windowSignals(db, from, at);
  const [recent, baseline] = await Promise.all([
    eriValues(db, new Date(at.getTime() - 60 * 60_000), at, 11),
    eriValues(db, new Date(at.getTime() - BASELINE_HOURS * 3_600_000), from, 2000),
  ]);
  const state = { ...computeEri(signals, recent, baseline), ...(await substrate(db, from, at)) };
  const sample = await saveSample(db, at, state);

  const dayStart = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
  const dayEnd = new Date(dayStart.getTime() + 86_400_000);
  const [dayTexts, dayCounts, eri] = await Promise.all([
    windowTexts(db, dayStart, dayEnd, 5000),
    windowCounts(db, dayStart, dayEnd),
    dayEri(db, dayStart, dayEnd),
  ]);
  const daySentiment = sentimentOfAll(dayTexts);
  await saveDaily(db, {
    day: dayStart.toISOString().slice(0, 10),
    sentimentSum: daySentiment.mean * daySentiment.n,
    sentimentN: daySentiment.n,
    requests: dayCounts.requests,
    jobsDone: dayCounts.jobsDone,
    errors: dayCounts.errors,
    eriSum: eri.sum,
    eriN: eri.n,
  });

  const d = state.drift;
  if (
    d.drifting &&
    d.direction !== 'none' &&
    d.baseline_eri !== null &&
    !(await recentDriftPrompt(db, new Date(at.getTime() - 3_600_000)))
  ) {
    await createFlowPrompt(db, {
      id: `flow_drift_${at.toISOString().slice(0, 16).replace(/[-:]/g, '')}`,
      trigger: 'eri_drift',
      prompt: driftPrompt(d.direction, state.eri, d.baseline_eri),
      context: { eri: state.eri, baseline_eri: d.baseline_eri, z: d.z },
    });
  }
  await pruneRateLimits(db);
  await notifyLive(db, { kind: 'sample', id: sample.id });
  return sample;
}

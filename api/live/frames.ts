import { computeAeci } from '../../activities/live/formulas';
import type { Db } from '../../activities/store/db';
import { dailyRange, type LiveSample } from '../../activities/store/live';
import type { ServerFrame } from '../../schema/live-frames';

const r2 = (x: number) => Math.round(x * 100) / 100;

/**
 * The public frames of one stored sample: resonance and substrate data come from the sample row,
 * sensory data also from the AECI of the sample's week, so every replica builds the same frames.
 */
export async function sampleFrames(db: Db, s: LiveSample): Promise<ServerFrame[]> {
  const day = s.sampledAt.slice(0, 10);
  const start = new Date(Date.parse(`${day}T00:00:00Z`) - 6 * 86_400_000).toISOString().slice(0, 10);
  const aeci = computeAeci(await dailyRange(db, start, day), day);
  const st = s.state;
  const frames: ServerFrame[] = [
    { type: 'resonance_sync', eri: st.eri, ers: st.ers, key: st.musical_key, bpm: st.bpm, sampled_at: s.sampledAt },
    {
      type: 'sensory_sync',
      hex: st.arte_palette[1] ?? '#808080',
      opacity: r2(0.5 + 0.5 * aeci.stability_score),
      pulse: r2(st.bpm / 60),
    },
  ];
  if (st.health) frames.push({ type: 'health_sync', ...st.health });
  if (st.curiosity) frames.push({ type: 'curiosity_sync', ...st.curiosity });
  return frames;
}

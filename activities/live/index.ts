import type { ActivityDeps } from '../deps';
import { sampleLive } from './sample';

/** Live-plane activities (run by the sampling schedule's workflow). */
export function createLiveActivities(deps: ActivityDeps) {
  return {
    /** Samples the live state for the minute of `at` (ISO time); returns the stored sample's id. */
    async liveSample(input: { at: string }): Promise<{ id: number; eri: number }> {
      const s = await sampleLive(deps.db, input.at);
      return { id: s.id, eri: s.state.eri };
    },
  };
}

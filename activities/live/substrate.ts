import os from 'node:os';
import type { Db } from '../store/db';
import { databaseLoad, windowFamilies } from '../store/live';

const r2 = (x: number) => Math.round(x * 100) / 100;

export interface Substrate {
  health: { cpu: number; ram: number; db: number; cognitive_health: 'thriving' | 'steady' | 'strained' | 'overloaded' };
  curiosity: { target: string; priority: number };
}

/**
 * Taken by the sampler (a worker), stored with the sample and sent by every replica as is, so all
 * replicas send the same health_sync and curiosity_sync frames. cpu = 1-minute load average per
 * core, ram = used share of memory, db = connections in use / max_connections (all 0..1, capped).
 * The label follows the worst of the three: < 0.5 thriving, < 0.75 steady, < 0.9 strained, else
 * overloaded. Curiosity: the capability family with the most work started in the window, its share.
 */
export async function substrate(db: Db, from: Date, to: Date): Promise<Substrate> {
  const cpu = r2(Math.min(1, os.loadavg()[0] / Math.max(1, os.cpus().length)));
  const ram = r2(Math.min(1, 1 - os.freemem() / os.totalmem()));
  const [dbLoad, families] = await Promise.all([databaseLoad(db), windowFamilies(db, from, to)]);
  const dbr = r2(Math.min(1, dbLoad));
  const worst = Math.max(cpu, ram, dbr);
  const label = worst < 0.5 ? 'thriving' : worst < 0.75 ? 'steady' : worst < 0.9 ? 'strained' : 'overloaded';
  const entries = Object.entries(families).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const total = entries.reduce((n, [, v]) => n + v, 0);
  return {
    health: { cpu, ram, db: dbr, cognitive_health: label },
    curiosity: total ? { target: entries[0][0], priority: r2(entries[0][1] / total) } : { target: 'idle', priority: 0 },
  };
}

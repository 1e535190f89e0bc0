import type { DateTime } from 'luxon';
import type { ConversationHarvestResponse as Out } from '../../schema/reasoning/conversation-harvest';
import { parseInstant } from './luxon-time';
import { clip, slug } from './text-segments';

/** Follow-up packets (one per owner, earliest due first) and memory seeds for /conversation/harvest. */
type Commitment = Out['commitments'][number];
type Thread = Out['unresolved_threads'][number];
type Decision = Out['decisions'][number];

function dueMillis(c: Commitment): number {
  const dt: DateTime | null = c.due?.at ? parseInstant(c.due.at) : null;
  return dt ? dt.toMillis() : Number.POSITIVE_INFINITY;
}

export function buildPackets(commitments: Commitment[], threads: Thread[], max: number): Out['follow_up_packets'] {
  const by = new Map<string, { owner: string; cs: Commitment[]; ts: Thread[] }>();
  const get = (owner: string) => {
    const key = owner.toLowerCase();
    let g = by.get(key);
    if (!g) by.set(key, (g = { owner, cs: [], ts: [] }));
    return g;
  };
  for (const c of commitments) get(c.owner).cs.push(c);
  for (const t of threads) get(t.addressed_to ?? t.asked_by ?? 'unassigned').ts.push(t);
  const groups = [...by.values()].map((g) => {
    const first = g.cs.reduce<Commitment | null>(
      (best, c) => (best === null || dueMillis(c) < dueMillis(best) ? c : best),
      null,
    );
    const earliest = first && Number.isFinite(dueMillis(first)) ? first.due!.at : null;
    return { ...g, earliest, ms: first ? dueMillis(first) : Number.POSITIVE_INFINITY };
  });
  groups.sort(
    (a, b) =>
      a.ms - b.ms ||
      b.cs.length + b.ts.length - (a.cs.length + a.ts.length) ||
      (a.owner < b.owner ? -1 : a.owner > b.owner ? 1 : 0),
  );
  const used = new Set<string>();
  return groups.slice(0, max).map((g) => {
    let id = `packet-${slug(g.owner)}`;
    for (let n = 2; used.has(id); n++) id = `packet-${slug(g.owner)}-${n}`;
    used.add(id);
    const parts = g.cs.slice(0, 5).map((c) => `${c.action}${c.due ? ` (due ${c.due.date ?? c.due.hint})` : ''}`);
    const qs = g.ts.slice(0, 3).map((t) => t.question);
    const draft = [
      `${g.owner}:`,
      parts.length ? `commitments: ${parts.join('; ')}${g.cs.length > 5 ? ` (+${g.cs.length - 5} more)` : ''}.` : '',
      qs.length ? `open: ${qs.join(' ')}${g.ts.length > 3 ? ` (+${g.ts.length - 3} more)` : ''}` : '',
    ]
      .filter(Boolean)
      .join(' ');
    return {
      id,
      owner: g.owner,
      commitment_ids: g.cs.map((c) => c.id),
      thread_ids: g.ts.map((t) => t.id),
      earliest_due: g.earliest,
      draft: clip(draft, 600),
    };
  });
}

export function buildSeeds(
  decisions: Decision[],
  df: Map<string, { n: number; ids: string[] }>,
  total: number,
  max: number,
): Out['memory_seeds'] {
  const seeds: Out['memory_seeds'] = [];
  for (const d of decisions.slice(0, Math.ceil(max / 2))) {
    seeds.push({
      id: `seed-${d.id}`,
      kind: 'decision',
      text: d.text,
      weight: 1,
      source_message_ids: [d.source.message_id],
    });
  }
  const topics = [...df.entries()]
    .filter(([, e]) => e.n >= 2)
    .sort((a, b) => b[1].n - a[1].n || (a[0] < b[0] ? -1 : 1));
  for (const [w, e] of topics) {
    if (seeds.length >= max) break;
    seeds.push({
      id: `seed-topic-${slug(w)}-${seeds.length + 1}`,
      kind: 'topic',
      text: w,
      weight: Math.round((e.n / Math.max(1, total)) * 1000) / 1000,
      source_message_ids: e.ids,
    });
  }
  return seeds.slice(0, max);
}

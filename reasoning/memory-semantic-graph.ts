import { defineReasoning } from './types';
import {
  memorySemanticGraphRequest,
  memorySemanticGraphResponse,
  relationType,
  type MemorySemanticGraphRequest,
  type MemorySemanticGraphResponse,
} from '../schema/reasoning/memory-semantic-graph';
import { slug, splitSentencesEach, splitWordsEach } from './lib/text-segments';
import { candidateTermsOfWords, isContentWord } from './lib/key-terms';

/**
 * Semantic memory graph: entities (capitalised name sequences), concepts (recurring content
 * terms) and tags become nodes; sentences give co-occurrence edges, and relation cues between
 * the nearest node before and after the cue give typed edges ("X works at Y" → works_at).
 * Nodes are ranked by how many items mention them and capped; clusters come from deterministic
 * label propagation over the kept edges. Pairwise work is bounded per sentence.
 */
type Res = MemorySemanticGraphResponse;
type Rel = Res['edges'][number]['type'];
const RELATIONS: [RegExp, Rel][] = [
  [/\b(?:is|are|was) an? (?:kind of |type of )?/i, 'is_a'],
  [/\b(?:is |are )?(?:part of|belongs to|member of)\b/i, 'part_of'],
  [/\b(?:works|worked|working) (?:at|for)\b|\bemployed by\b/i, 'works_at'],
  [/\b(?:lives|lived|based|located) in\b/i, 'located_in'],
  [/\b(?:uses|used|using|relies on)\b/i, 'uses'],
  [/\b(?:depends on|requires|needs)\b/i, 'depends_on'],
  [/\b(?:prefers|likes|loves|enjoys)\b/i, 'prefers'],
];
const RELATION_TYPES: readonly Rel[] = relationType.options;
const CAP_SEQ = /\b(\p{Lu}[\p{L}\p{N}&'.-]*(?:\s+(?:of|de|van|von)?\s*\p{Lu}[\p{L}\p{N}&'.-]*)*)/gu;

interface Cand {
  key: string;
  label: string;
  kind: 'entity' | 'concept' | 'tag';
  items: string[];
  count: number;
  first: number;
}
interface Mention {
  key: string;
  pos: number;
}

export function compileMemorySemanticGraph(input: MemorySemanticGraphRequest, _ctx: { surface?: string }): Res {
  const maxNodes = input.preferences.max_nodes ?? 50;
  const maxEdges = input.preferences.max_edges ?? 4 * maxNodes;
  const includeTags = input.preferences.include_tags !== false;
  const cands = new Map<string, Cand>();
  const note = (key: string, label: string, kind: Cand['kind'], item: string) => {
    let c = cands.get(key);
    if (!c) cands.set(key, (c = { key, label, kind, items: [], count: 0, first: cands.size }));
    c.count++;
    if (c.items[c.items.length - 1] !== item && c.items.length < 50) c.items.push(item);
  };

  // Words the corpus also writes in lower case are not names when they open a sentence.
  const lowerSeen = new Set<string>();
  for (const it of input.items)
    for (const w of it.text.match(/(?<![\p{L}\p{N}])\p{Ll}[\p{L}\p{N}]*/gu) ?? []) lowerSeen.add(w);

  // Pass 1: mentions per sentence.
  const sentences: { item: string; text: string; mentions: Mention[] }[] = [];
  const seenItems = new Set<string>();
  const visit = (it: MemorySemanticGraphRequest['items'][number], itemSentences: string[], itemWords: string[][]) => {
    if (seenItems.has(it.id)) return;
    seenItems.add(it.id);
    if (includeTags)
      for (const t of new Set((it.tags ?? []).map((x) => x.trim().toLowerCase()).filter(Boolean)))
        note(`tag:${t}`, t, 'tag', it.id);
    itemSentences.forEach((text, si) => {
      const mentions: Mention[] = [];
      const entityWords = new Set<string>();
      for (const m of text.matchAll(CAP_SEQ)) {
        const label = m[1].replace(/[.'-]+$/, '');
        const words = label.toLowerCase().split(/\s+/);
        // A lone capitalised word opening the sentence is usually just grammar.
        if (m.index === 0 && words.length === 1 && lowerSeen.has(words[0])) continue;
        if (words.length === 1 && !isContentWord(words[0])) continue;
        const key = `entity:${words.join(' ')}`;
        note(key, label, 'entity', it.id);
        mentions.push({ key, pos: m.index });
        words.forEach((w) => entityWords.add(w));
      }
      const lower = text.toLowerCase(); // once per sentence, not once per term
      for (const term of new Set(candidateTermsOfWords(itemWords[si]))) {
        if (term.split(' ').some((w) => entityWords.has(w))) continue;
        const key = `concept:${term}`;
        note(key, term, 'concept', it.id);
        const pos = lower.indexOf(term);
        mentions.push({ key, pos: pos < 0 ? 0 : pos });
      }
      sentences.push({ item: it.id, text, mentions });
    });
  };
  // Sentences and their words come from one segmenter pass per chunk of items: a segment()
  // call per item and per sentence made large inputs GC-bound.
  for (let from = 0; from < input.items.length; from += 256) {
    const chunk = input.items.slice(from, from + 256);
    const chunkSentences = splitSentencesEach(chunk.map((it) => it.text)).map((ss) => ss.slice(0, 200));
    const chunkWords = splitWordsEach(chunkSentences.flat());
    let w = 0;
    chunk.forEach((it, c) => {
      const n = chunkSentences[c].length;
      visit(it, chunkSentences[c], chunkWords.slice(w, w + n));
      w += n;
    });
  }

  // Rank: items mentioning the node, entities and tags first on ties; concepts need 2 items.
  const kindBonus = { entity: 0.5, tag: 0.25, concept: 0 };
  const eligible = (c: Cand) =>
    c.kind !== 'concept' || c.items.length >= 2 || (c.key.split(' ').length > 1 && c.count >= 2);
  // A shorter concept adds nothing when a longer one covers all of its items ("dashboard" in "fleet dashboard").
  const coveredBy = new Map<string, number>();
  for (const c of cands.values()) {
    if (c.kind !== 'concept' || !eligible(c)) continue;
    const w = c.label.split(' ');
    for (let len = 1; len < w.length; len++)
      for (let i = 0; i + len <= w.length; i++) {
        const sub = w.slice(i, i + len).join(' ');
        coveredBy.set(sub, Math.max(coveredBy.get(sub) ?? 0, c.items.length));
      }
  }
  const ranked = [...cands.values()]
    .filter((c) => eligible(c) && !(c.kind === 'concept' && c.items.length <= (coveredBy.get(c.label) ?? 0)))
    .sort(
      (a, b) =>
        b.items.length + kindBonus[b.kind] - (a.items.length + kindBonus[a.kind]) ||
        b.count - a.count ||
        a.first - b.first,
    );
  const kept = ranked.slice(0, maxNodes);
  const keptIds: string[] = []; // node id of kept[k]
  const usedIds = new Set<string>();
  for (const c of kept) {
    let id = `${c.kind}-${slug(c.label)}`;
    for (let k = 2; usedIds.has(id); k++) id = `${c.kind}-${slug(c.label)}-${k}`;
    usedIds.add(id);
    keptIds.push(id);
  }

  // Pass 2: edges among kept nodes. Nodes are addressed by index and edges by a numeric key: a
  // string key per linked pair made this pass the slowest part on large inputs.
  const edges = new Map<
    number,
    { from: string; to: string; type: Rel; weight: number; items: string[]; first: number }
  >();
  const N = kept.length;
  const idxOf = new Map(kept.map((c, k) => [c.key, k]));
  const link = (from: number, to: number, type: Rel, item: string) => {
    if (from === to) return;
    const [a, b] = (type === 'co_occurs' || type === 'tagged') && keptIds[to] < keptIds[from] ? [to, from] : [from, to];
    const key = (a * N + b) * RELATION_TYPES.length + RELATION_TYPES.indexOf(type);
    let e = edges.get(key);
    if (!e) edges.set(key, (e = { from: keptIds[a], to: keptIds[b], type, weight: 0, items: [], first: edges.size }));
    e.weight++;
    if (e.items[e.items.length - 1] !== item && e.items.length < 20) e.items.push(item);
  };
  const tagsOf = new Map(
    input.items.map((it) => [
      it.id,
      [
        ...new Set(
          (it.tags ?? [])
            .map((t) => idxOf.get(`tag:${t.trim().toLowerCase()}`))
            .filter((x): x is number => x !== undefined),
        ),
      ],
    ]),
  );
  let typed = 0;
  for (const s of sentences) {
    const ms = s.mentions.filter((m) => idxOf.has(m.key)).sort((a, b) => a.pos - b.pos || (a.key < b.key ? -1 : 1));
    const uniq = [...new Map(ms.map((m) => [m.key, m])).values()].slice(0, 8);
    for (let i = 0; i < uniq.length; i++)
      for (let j = i + 1; j < uniq.length; j++)
        link(idxOf.get(uniq[i].key)!, idxOf.get(uniq[j].key)!, 'co_occurs', s.item);
    for (const [re, type] of RELATIONS) {
      const m = re.exec(s.text);
      if (!m) continue;
      // Only the names right next to the cue take part (the subject within ~40 characters before,
      // the object within ~25 after), so distant words in a long sentence are not related.
      const end = m.index + m[0].length;
      const before = ms.findLast((x) => x.pos < m.index && m.index - x.pos <= 40);
      const after = ms.find((x) => x.pos >= end && x.pos - end <= (type === 'is_a' ? 12 : 25));
      if (before && after && before.key !== after.key) {
        link(idxOf.get(before.key)!, idxOf.get(after.key)!, type, s.item);
        typed++;
      }
    }
    for (const t of tagsOf.get(s.item) ?? [])
      for (const m of uniq.slice(0, 4)) link(idxOf.get(m.key)!, t, 'tagged', s.item);
  }
  const edgeList = [...edges.values()]
    .sort(
      (a, b) =>
        Number(b.type !== 'co_occurs') - Number(a.type !== 'co_occurs') || b.weight - a.weight || a.first - b.first,
    )
    .slice(0, maxEdges);

  // Clusters: label propagation (weighted, ties to the smaller label), fixed 6 rounds.
  const label = new Map(keptIds.map((id, k) => [id, k]));
  const adj = new Map<string, { to: string; w: number }[]>(keptIds.map((id) => [id, []]));
  for (const e of edgeList) {
    adj.get(e.from)!.push({ to: e.to, w: e.weight });
    adj.get(e.to)!.push({ to: e.from, w: e.weight });
  }
  for (let round = 0; round < 6; round++) {
    let changed = false;
    for (const id of keptIds) {
      const score = new Map<number, number>();
      for (const n of adj.get(id)!) score.set(label.get(n.to)!, (score.get(label.get(n.to)!) ?? 0) + n.w);
      let best = label.get(id)!;
      let bestW = score.get(best) ?? 0;
      for (const [l, w] of score) if (w > bestW || (w === bestW && l < best)) [best, bestW] = [l, w];
      if (best !== label.get(id)) [changed] = [true, label.set(id, best)];
    }
    if (!changed) break;
  }
  const groups = new Map<number, string[]>();
  for (const id of keptIds) groups.set(label.get(id)!, [...(groups.get(label.get(id)!) ?? []), id]);
  const clusterOf = new Map<string, string>();
  const indexOf = new Map(keptIds.map((id, k) => [id, k]));
  const clusters = [...groups.entries()]
    .sort((a, b) => b[1].length - a[1].length || a[0] - b[0])
    .map(([, ids], k) => {
      const cid = `cluster-${k + 1}`;
      ids.forEach((id) => clusterOf.set(id, cid));
      const items = new Set(ids.flatMap((id) => kept[indexOf.get(id)!].items));
      // Named after its highest-ranked node (ids keep rank order).
      return { id: cid, label: kept[indexOf.get(ids[0])!].label, node_ids: ids, item_count: items.size };
    });
  const linked = new Set(kept.flatMap((c) => c.items));

  return {
    nodes: kept.map((c, k) => ({
      id: keptIds[k],
      label: c.label,
      kind: c.kind,
      weight: c.items.length,
      item_ids: c.items.slice(0, 20),
      cluster_id: clusterOf.get(keptIds[k])!,
    })),
    edges: edgeList.map((e, k) => ({
      id: `e${k + 1}`,
      from: e.from,
      to: e.to,
      type: e.type,
      weight: e.weight,
      evidence_item_ids: e.items,
    })),
    clusters,
    unlinked_item_ids: [...seenItems].filter((id) => !linked.has(id)).slice(0, 100),
    stats: {
      items: seenItems.size,
      candidate_nodes: cands.size,
      dropped_nodes: Math.max(0, ranked.length - kept.length),
      typed_edges: typed,
    },
    integration_hints: [
      {
        kind: 'graph_store',
        target: 'memory',
        detail: `upsert ${kept.length} nodes and ${edgeList.length} edges keyed by node id`,
      },
      {
        kind: 'retrieval',
        target: 'chat',
        detail: `expand a recalled item through its cluster (${clusters.length} clusters)`,
      },
    ],
  };
}

export const memorySemanticGraph = defineReasoning({
  path: '/memory/semantic/graph',
  summary: 'Link memory items into an entity/concept graph with typed edges and clusters, capped by max_nodes.',
  request: memorySemanticGraphRequest,
  response: memorySemanticGraphResponse,
  compile: compileMemorySemanticGraph,
  example: {
    surface: 'chat',
    items: [
      { id: 'm1', text: 'Priya works at Acme Robotics. She prefers async standups.', tags: ['work'] },
      { id: 'm2', text: 'Acme Robotics uses Kubernetes for the fleet dashboard.', tags: ['work', 'infra'] },
      { id: 'm3', text: 'The fleet dashboard depends on Kubernetes and Postgres.', tags: ['infra'] },
      { id: 'm4', text: 'Priya lives in Lisbon and runs on weekends.', tags: ['personal'] },
      { id: 'm5', text: 'Lisbon is a city with great async coffee meetups.', kind: 'note' },
    ],
    preferences: { max_nodes: 12 },
  },
});

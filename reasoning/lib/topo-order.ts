/**
 * Deterministic topological order (Kahn's algorithm with a priority heap) that never fails:
 * when the remaining graph has no source node, a cycle exists; it is reported, and the
 * lowest-priority node of the remaining set is released by dropping its incoming edges
 * from the cycle. Priority is the node's position in `nodes`. O((V + E) log V).
 */
import { MinHeap } from './dag';

export interface DagEdge {
  from: string;
  to: string;
}

export interface TopoResult<E extends DagEdge> {
  order: string[];
  /** Edges dropped to break cycles. */
  removed: E[];
  /** Cycles found (node ids in edge order), at most `maxCycles`. */
  cycles: string[][];
}

export function topoOrder<E extends DagEdge>(nodes: string[], edges: E[], maxCycles = 20): TopoResult<E> {
  const index = new Map<string, number>();
  nodes.forEach((n, i) => {
    if (!index.has(n)) index.set(n, i);
  });
  const out: number[][] = nodes.map(() => []);
  const inc: number[][] = nodes.map(() => []);
  const indeg = nodes.map(() => 0);
  const valid: E[] = [];
  for (const e of edges) {
    const f = index.get(e.from);
    const t = index.get(e.to);
    if (f === undefined || t === undefined || f === t) continue;
    const k = valid.length;
    valid.push(e);
    out[f].push(k);
    inc[t].push(k);
    indeg[t]++;
  }
  const alive = valid.map(() => true);
  const done = nodes.map((n, i) => index.get(n) !== i); // duplicates count as done
  const heap = new MinHeap((x, y) => x < y);
  indeg.forEach((d, i) => {
    if (d === 0 && !done[i]) heap.push(i);
  });
  const order: string[] = [];
  const removed: E[] = [];
  const cycles: string[][] = [];
  let cursor = 0;
  const release = (i: number) => {
    done[i] = true;
    order.push(nodes[i]);
    for (const k of out[i]) {
      if (!alive[k]) continue;
      alive[k] = false;
      const t = index.get(valid[k].to)!;
      if (--indeg[t] === 0 && !done[t]) heap.push(t);
    }
  };
  for (;;) {
    while (heap.size) {
      const i = heap.pop()!;
      if (!done[i]) release(i);
    }
    while (cursor < nodes.length && done[cursor]) cursor++;
    if (cursor >= nodes.length) break;
    const start = cursor;
    if (cycles.length < maxCycles) cycles.push(traceCycle(start, inc, alive, valid, index, done).map((i) => nodes[i]));
    for (const k of inc[start]) {
      if (!alive[k]) continue;
      alive[k] = false;
      removed.push(valid[k]);
      indeg[start]--;
    }
    heap.push(start);
  }
  return { order, removed, cycles };
}

/** Walk incoming live edges backwards from `start` until a node repeats; return that cycle. */
function traceCycle(
  start: number,
  inc: number[][],
  alive: boolean[],
  valid: DagEdge[],
  index: Map<string, number>,
  done: boolean[],
): number[] {
  const seenAt = new Map<number, number>();
  const path: number[] = [];
  let cur = start;
  while (!seenAt.has(cur)) {
    seenAt.set(cur, path.length);
    path.push(cur);
    let prev = -1;
    for (const k of inc[cur]) {
      if (!alive[k]) continue;
      const f = index.get(valid[k].from)!;
      if (!done[f]) {
        prev = f;
        break;
      }
    }
    if (prev < 0) return [start];
    cur = prev;
  }
  // path runs backwards along edges; the cycle is path[seenAt(cur)..], reversed to edge direction.
  return path.slice(seenAt.get(cur)!).reverse();
}

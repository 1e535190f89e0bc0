/**
 * Dependency-graph toolkit for the planning compilers (workflow grammar, work graphs,
 * orchestration, code change plans). Nodes are dense indexes 0..n-1; edges point from a
 * prerequisite to the node that needs it. Everything is iterative (no recursion, so 10,000-node
 * chains cannot overflow the stack) and O((n + e) log n) at worst, with ties always broken by
 * the caller's priority and then by node index, so results are deterministic.
 */

/** Binary min-heap over numbers with a caller-supplied comparator. */
export class MinHeap {
  private a: number[] = [];
  constructor(private readonly less: (x: number, y: number) => boolean) {}
  get size(): number {
    return this.a.length;
  }
  /** Smallest element without removing it. */
  peek(): number | undefined {
    return this.a[0];
  }
  push(v: number): void {
    const a = this.a;
    a.push(v);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(a[i], a[p])) break;
      const t = a[i];
      a[i] = a[p];
      a[p] = t;
      i = p;
    }
  }
  pop(): number | undefined {
    const a = this.a;
    if (a.length === 0) return undefined;
    const top = a[0];
    const last = a.pop()!;
    if (a.length > 0) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && this.less(a[l], a[m])) m = l;
        if (r < a.length && this.less(a[r], a[m])) m = r;
        if (m === i) break;
        const t = a[i];
        a[i] = a[m];
        a[m] = t;
        i = m;
      }
    }
    return top;
  }
}

export interface Dag {
  n: number;
  /** succ[i]: nodes that depend on i. */
  succ: number[][];
  /** pred[i]: nodes i depends on (resolved, de-duplicated, self-loops kept). */
  pred: number[][];
  /** Dependency strings that named no node, per node index. */
  missing: { node: number; ref: string }[];
}

/**
 * Build a DAG from ids and their dependency lists. `resolve` maps a dependency string to a node
 * index (or undefined when it names nothing); by default an exact id lookup. Duplicate edges
 * are dropped.
 */
export function buildDag(
  ids: readonly string[],
  deps: readonly (readonly string[])[],
  resolve?: (ref: string) => number | undefined,
): Dag {
  const n = ids.length;
  const index = new Map<string, number>();
  ids.forEach((id, i) => {
    if (!index.has(id)) index.set(id, i);
  });
  const find = resolve ?? ((ref: string) => index.get(ref));
  const succ: number[][] = Array.from({ length: n }, () => []);
  const pred: number[][] = Array.from({ length: n }, () => []);
  const missing: { node: number; ref: string }[] = [];
  for (let i = 0; i < n; i++) {
    const seen = new Set<number>();
    for (const ref of deps[i] ?? []) {
      const j = find(ref);
      if (j === undefined) {
        missing.push({ node: i, ref });
        continue;
      }
      if (seen.has(j)) continue;
      seen.add(j);
      pred[i].push(j);
      succ[j].push(i);
    }
  }
  return { n, succ, pred, missing };
}

/**
 * Strongly connected components that form cycles (size > 1, or a self-loop), each sorted by
 * node index; components are ordered by their smallest index. Iterative Tarjan.
 */
export function findCycles(g: Dag): number[][] {
  const { n, succ } = g;
  const idx = new Int32Array(n).fill(-1);
  const low = new Int32Array(n);
  const onStack = new Uint8Array(n);
  const stack: number[] = [];
  const out: number[][] = [];
  // DFS work stack as two typed arrays (node, next successor position): no per-node allocation.
  const workNode = new Int32Array(n);
  const workPos = new Int32Array(n);
  let counter = 0;
  for (let s = 0; s < n; s++) {
    if (idx[s] !== -1) continue;
    workNode[0] = s;
    workPos[0] = 0;
    let depth = 1;
    idx[s] = low[s] = counter++;
    stack.push(s);
    onStack[s] = 1;
    while (depth) {
      const v = workNode[depth - 1];
      if (workPos[depth - 1] < succ[v].length) {
        const w = succ[v][workPos[depth - 1]++];
        if (idx[w] === -1) {
          idx[w] = low[w] = counter++;
          stack.push(w);
          onStack[w] = 1;
          workNode[depth] = w;
          workPos[depth] = 0;
          depth++;
        } else if (onStack[w]) low[v] = Math.min(low[v], idx[w]);
        continue;
      }
      depth--;
      if (depth) {
        const u = workNode[depth - 1];
        low[u] = Math.min(low[u], low[v]);
      }
      if (low[v] === idx[v]) {
        const comp: number[] = [];
        let w: number;
        do {
          w = stack.pop()!;
          onStack[w] = 0;
          comp.push(w);
        } while (w !== v);
        if (comp.length > 1 || g.pred[v].includes(v)) out.push(comp.sort((a, b) => a - b));
      }
    }
  }
  return out.sort((a, b) => a[0] - b[0]);
}

/**
 * Kahn topological order. Among ready nodes the one with the highest `priority` (default 0)
 * goes first, then the lowest index. Nodes in or behind a cycle never become ready and are
 * returned in `stuck` (index order).
 */
export function topoOrder(g: Dag, priority?: (i: number) => number): { order: number[]; stuck: number[] } {
  const indeg = g.pred.map((p) => p.length);
  const pr = priority ?? (() => 0);
  const heap = new MinHeap((a, b) => {
    const d = pr(b) - pr(a);
    return d !== 0 ? d < 0 : a < b;
  });
  for (let i = 0; i < g.n; i++) if (indeg[i] === 0) heap.push(i);
  const order: number[] = [];
  while (heap.size) {
    const v = heap.pop()!;
    order.push(v);
    for (const w of g.succ[v]) if (--indeg[w] === 0) heap.push(w);
  }
  const placed = new Uint8Array(g.n);
  for (const v of order) placed[v] = 1;
  const stuck: number[] = [];
  for (let i = 0; i < g.n; i++) if (!placed[i]) stuck.push(i);
  return { order, stuck };
}

/**
 * Longest weighted path over the acyclic part (`order` must be a topological order).
 * Returns earliest start/finish per node (NaN for nodes not in `order`), the path itself and
 * its length. Ties pick the lowest-index predecessor, so the path is deterministic.
 */
export function criticalPath(
  g: Dag,
  order: readonly number[],
  weight: (i: number) => number,
): { start: Float64Array; finish: Float64Array; path: number[]; length: number } {
  const start = new Float64Array(g.n).fill(NaN);
  const finish = new Float64Array(g.n).fill(NaN);
  const via = new Int32Array(g.n).fill(-1);
  for (const v of order) {
    let best = -1;
    for (const p of g.pred[v]) {
      if (Number.isNaN(finish[p])) continue;
      if (best === -1 || finish[p] > finish[best] || (finish[p] === finish[best] && p < best)) best = p;
    }
    via[v] = best;
    const s = best === -1 ? 0 : finish[best];
    start[v] = s;
    finish[v] = s + Math.max(0, weight(v));
  }
  let end = -1;
  for (const v of order) if (end === -1 || finish[v] > finish[end] || (finish[v] === finish[end] && v < end)) end = v;
  const path: number[] = [];
  for (let v = end; v !== -1; v = via[v]) path.push(v);
  path.reverse();
  return { start, finish, path, length: end === -1 ? 0 : finish[end] };
}

/** Longest remaining weighted path from each node to any sink (the "bottom level"). */
export function bottomLevel(g: Dag, order: readonly number[], weight: (i: number) => number): Float64Array {
  const bl = new Float64Array(g.n);
  for (let k = order.length - 1; k >= 0; k--) {
    const v = order[k];
    let m = 0;
    for (const w of g.succ[v]) if (bl[w] > m) m = bl[w];
    bl[v] = m + Math.max(0, weight(v));
  }
  return bl;
}

/** All nodes reachable from `from` along `adj` (excluding the start nodes), BFS order, capped. */
export function reach(adj: readonly number[][], from: readonly number[], cap = Infinity): number[] {
  const seen = new Set<number>(from);
  const out: number[] = [];
  const queue = [...from];
  for (let h = 0; h < queue.length && out.length < cap; h++) {
    for (const w of adj[queue[h]]) {
      if (seen.has(w)) continue;
      seen.add(w);
      out.push(w);
      queue.push(w);
      if (out.length >= cap) break;
    }
  }
  return out;
}

/**
 * Reciprocal rank fusion of ranked id lists (Cormack et al. 2009): score = Σ weight / (k + rank), each list's weight
 * 1 unless `weights` gives it. Ties keep the order of first appearance, so the result is deterministic.
 */
export function fuseRankings(
  lists: Array<Array<{ id: string }>>,
  k = 60,
  weights?: number[],
): Array<{ id: string; score: number }> {
  const scores = new Map<string, { score: number; first: number }>();
  let seen = 0;
  lists.forEach((list, l) => {
    const weight = weights?.[l] ?? 1;
    list.forEach((item, rank) => {
      const cur = scores.get(item.id);
      if (cur) cur.score += weight / (k + rank + 1);
      else scores.set(item.id, { score: weight / (k + rank + 1), first: seen++ });
    });
  });
  return [...scores.entries()]
    .sort((a, b) => b[1].score - a[1].score || a[1].first - b[1].first)
    .map(([id, v]) => ({ id, score: v.score }));
}

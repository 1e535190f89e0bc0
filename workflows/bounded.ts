/** Runs `fn` over `items` with at most `limit` in flight (deterministic: Promise.race in workflow code). */
export async function mapBounded<T, R>(
  items: T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  const inflight = new Set<Promise<void>>();
  for (let i = 0; i < items.length; i++) {
    if (inflight.size >= limit) await Promise.race(inflight);
    const p: Promise<void> = fn(items[i], i).then((r) => {
      results[i] = r;
      inflight.delete(p);
    });
    inflight.add(p);
  }
  await Promise.all(inflight);
  return results;
}

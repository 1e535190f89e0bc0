/**
 * Group commit per key, in process: writes for one key (e.g. one event stream) run one statement
 * at a time; the writes that arrive while one is in flight wait and go together as the next
 * statement. An idle key flushes on the next turn of the event loop (`setImmediate`), so a lone
 * write waits only for the writes that arrived with it, and under load N concurrent writes cost
 * about one round trip and one commit instead of N.
 *
 * Order: per key, a write queued earlier is in the same statement or an earlier one. A batch that
 * fails is retried one write at a time, so one bad write (a value the database refuses) fails
 * only its own caller.
 */
export class GroupWriter<T, R> {
  private readonly queues = new Map<string, { pending: Array<Pending<T, R>>; busy: boolean }>();

  /**
   * @param write runs one batch (1..`max` items of one key) as one statement; returns one result per item, in order
   * @param opts.max most items per statement
   * @param opts.apart items that must not share a statement (e.g. two writes of the same row): the later waits for the next one
   */
  constructor(
    private readonly write: (key: string, items: T[]) => Promise<R[]>,
    private readonly opts: { max: number; apart?: (a: T, b: T) => boolean },
  ) {}

  add(key: string, item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      let q = this.queues.get(key);
      if (!q) this.queues.set(key, (q = { pending: [], busy: false }));
      q.pending.push({ item, resolve, reject });
      if (q.busy) return;
      q.busy = true;
      setImmediate(() => void this.drain(key, q));
    });
  }

  private take(q: { pending: Array<Pending<T, R>> }): Array<Pending<T, R>> {
    const batch: Array<Pending<T, R>> = [];
    const rest: Array<Pending<T, R>> = [];
    const apart = this.opts.apart;
    for (const p of q.pending) {
      if (batch.length < this.opts.max && !(apart && batch.some((b) => apart(b.item, p.item)))) batch.push(p);
      else rest.push(p);
    }
    q.pending = rest;
    return batch;
  }

  private async drain(key: string, q: { pending: Array<Pending<T, R>>; busy: boolean }): Promise<void> {
    try {
      while (q.pending.length) {
        const batch = this.take(q);
        try {
          const results = await this.write(
            key,
            batch.map((p) => p.item),
          );
          batch.forEach((p, i) => p.resolve(results[i]));
        } catch (err) {
          if (batch.length === 1) {
            batch[0].reject(err);
            continue;
          }
          for (const p of batch) {
            try {
              p.resolve((await this.write(key, [p.item]))[0]);
            } catch (e) {
              p.reject(e);
            }
          }
        }
      }
    } finally {
      q.busy = false;
      if (this.queues.get(key) === q) this.queues.delete(key);
    }
  }
}

interface Pending<T, R> {
  item: T;
  resolve: (r: R) => void;
  reject: (err: unknown) => void;
}

import { GroupWriter } from '../../activities/store/group-writer';

type Item = { id: string; v: number };

/** A writer whose calls are recorded and whose statements end only when the test says so. */
function recorder(fail?: (items: Item[]) => boolean) {
  const calls: Array<{ key: string; items: Item[]; done: () => void }> = [];
  const writer = new GroupWriter<Item, string>(
    (key, items) =>
      new Promise((resolve, reject) => {
        calls.push({
          key,
          items,
          done: () => (fail?.(items) ? reject(new Error('refused')) : resolve(items.map((i) => `${key}:${i.id}`))),
        });
      }),
    { max: 3, apart: (a, b) => a.id === b.id },
  );
  return { calls, writer };
}

const tick = () => new Promise((r) => setImmediate(r));

test('writes queued together go as one statement, in order; writes arriving meanwhile go as the next', async () => {
  const { calls, writer } = recorder();
  const first = [writer.add('k', { id: 'a', v: 1 }), writer.add('k', { id: 'b', v: 2 })];
  await tick();
  expect(calls.map((c) => c.items.map((i) => i.id))).toEqual([['a', 'b']]);
  // While the first statement runs, two more arrive: they wait, then share the next statement.
  const later = [writer.add('k', { id: 'c', v: 3 }), writer.add('k', { id: 'd', v: 4 })];
  await tick();
  expect(calls).toHaveLength(1);
  calls[0].done();
  expect(await Promise.all(first)).toEqual(['k:a', 'k:b']);
  await tick();
  expect(calls.map((c) => c.items.map((i) => i.id))).toEqual([
    ['a', 'b'],
    ['c', 'd'],
  ]);
  calls[1].done();
  expect(await Promise.all(later)).toEqual(['k:c', 'k:d']);
});

test('keys do not wait on each other; at most `max` per statement; writes kept apart go in separate statements', async () => {
  const { calls, writer } = recorder();
  const all = [
    writer.add('x', { id: 'a', v: 1 }),
    writer.add('y', { id: 'a', v: 1 }),
    writer.add('x', { id: 'b', v: 2 }),
    writer.add('x', { id: 'a', v: 3 }), // same id as an earlier one: next statement
    writer.add('x', { id: 'c', v: 4 }),
    writer.add('x', { id: 'd', v: 5 }), // over max (3): next statement
  ];
  await tick();
  expect(calls.map((c) => [c.key, c.items.map((i) => `${i.id}${i.v}`)])).toEqual([
    ['x', ['a1', 'b2', 'c4']],
    ['y', ['a1']],
  ]);
  calls[0].done();
  calls[1].done();
  await tick();
  await tick();
  expect(calls[2].items.map((i) => `${i.id}${i.v}`)).toEqual(['a3', 'd5']);
  calls[2].done();
  expect(await Promise.all(all)).toEqual(['x:a', 'y:a', 'x:b', 'x:a', 'x:c', 'x:d']);
});

test('a failed statement is retried one write at a time: only the bad write fails', async () => {
  const { calls, writer } = recorder((items) => items.some((i) => i.id === 'bad'));
  const outcomes = Promise.allSettled([
    writer.add('k', { id: 'g1', v: 1 }),
    writer.add('k', { id: 'bad', v: 2 }),
    writer.add('k', { id: 'g2', v: 3 }),
  ]);
  await tick();
  calls[0].done(); // the batch of three fails
  for (let i = 1; i <= 3; i++) {
    await tick();
    expect(calls).toHaveLength(i + 1);
    expect(calls[i].items).toHaveLength(1);
    calls[i].done();
  }
  const [good1, bad, good2] = await outcomes;
  expect(good1).toEqual({ status: 'fulfilled', value: 'k:g1' });
  expect(bad).toMatchObject({ status: 'rejected', reason: new Error('refused') });
  expect(good2).toEqual({ status: 'fulfilled', value: 'k:g2' });
});

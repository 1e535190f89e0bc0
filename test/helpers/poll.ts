/** Polls `get` every 100 ms until `done` holds; fails with the last value after `timeoutMs`. */
export async function pollUntil<T>(get: () => Promise<T>, done: (v: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = await get();
  while (!done(last)) {
    if (Date.now() > deadline)
      throw new Error(`condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(last).slice(0, 2000)}`);
    await new Promise((r) => setTimeout(r, 100));
    last = await get();
  }
  return last;
}

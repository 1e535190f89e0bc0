import { startHarness, type Harness } from './harness';

/**
 * Test-file setup: beforeAll starts the harness (with `worker`/`env`) and mints a key with `scopes` (with
 * `other`, a second one in another tenant), then hands them to `ready` (assign them to the file's
 * variables); afterAll closes the harness.
 */
export function withHarness(
  opts: { scopes: string[]; worker?: boolean; env?: Record<string, string>; other?: boolean },
  ready: (h: Harness, key: string, otherKey: string) => void,
): void {
  let h: Harness | undefined;
  beforeAll(async () => {
    h = await startHarness({ worker: opts.worker, env: opts.env });
    const key = (await h.key(opts.scopes)).apiKey;
    ready(h, key, opts.other ? (await h.key(opts.scopes)).apiKey : '');
  });
  afterAll(async () => h?.close());
}

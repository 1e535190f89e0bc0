import { resetWhenIdle, startFakeOpenAI, type FakeBehavior, type FakeOpenAI } from './fake-openai';
import { startHarness, type Harness } from './harness';

export interface FakeUpstream {
  fake: FakeOpenAI;
  h: Harness;
  key: string;
}

/**
 * Test-file setup for anything that calls a model lane: beforeAll starts a fake OpenAI upstream,
 * the harness pointed at it (OPENAI_BASE_URL, plus `env`) and mints a key with `scopes`, then
 * hands the three to `ready` (assign them to the file's variables); afterAll closes both.
 * With `resetEach`, every test starts with an idle upstream, cleared, answering `resetEach` by default.
 */
export function withFakeUpstream(
  opts: { scopes: string[]; worker?: boolean; env?: Record<string, string>; resetEach?: FakeBehavior },
  ready: (up: FakeUpstream) => void,
): void {
  const up: Partial<FakeUpstream> = {};
  beforeAll(async () => {
    up.fake = await startFakeOpenAI();
    up.h = await startHarness({ worker: opts.worker, env: { OPENAI_BASE_URL: up.fake.url, ...opts.env } });
    up.key = (await up.h.key(opts.scopes)).apiKey;
    ready(up as FakeUpstream);
  });
  afterAll(async () => {
    await up.h?.close();
    await up.fake?.close();
  });
  const reset = opts.resetEach;
  if (reset) {
    beforeEach(async () => {
      await resetWhenIdle(up.fake!);
      up.fake!.setDefault(reset);
    });
  }
}

import type { PublicLane } from '../../schema/model-config';
import type { ProviderDef, Target } from './openai-client';

export const OLLAMA_DEFAULT_URL = 'http://127.0.0.1:11434';
const ALIVE_FOR_MS = 30_000;
const DEAD_FOR_MS = 5_000;

/** Preferred installed model per small lane (first match wins, else the first model). */
const PREFER: Partial<Record<PublicLane, RegExp>> = {
  'slm-code': /cod(e|er)/i,
  'slm-reason': /(r1|reason|qwq|think)/i,
};

/**
 * When nothing is configured, a local Ollama on its default port is used if it answers.
 * Its installed models come from its OpenAI-compatible `GET /v1/models`; the answer is cached
 * briefly (alive 30 s, absent 5 s) so a missing Ollama costs one refused connect per 5 s.
 */
export class LocalDiscovery {
  private models: string[] = [];
  private checkedAt = 0;
  private pending?: Promise<void>;
  readonly provider: ProviderDef;

  constructor(private readonly baseUrl: string) {
    this.provider = { name: 'ollama', baseUrl: `${baseUrl.replace(/\/+$/, '')}/v1`, timeoutMs: 120_000 };
  }

  /** What the last probe found (sync, for listings). */
  get alive(): boolean {
    return this.models.length > 0;
  }

  private async probe(): Promise<void> {
    try {
      const res = await fetch(`${this.provider.baseUrl}/models`, { signal: AbortSignal.timeout(800) });
      const body = res.ok ? ((await res.json()) as { data?: Array<{ id?: unknown }> }) : {};
      this.models = (body.data ?? [])
        .map((m) => m.id)
        .filter((id): id is string => typeof id === 'string' && id.length > 0);
    } catch {
      this.models = [];
    }
    this.checkedAt = Date.now();
  }

  async targets(lane: PublicLane): Promise<Target[]> {
    const age = Date.now() - this.checkedAt;
    if (age > (this.alive ? ALIVE_FOR_MS : DEAD_FOR_MS)) {
      this.pending ??= this.probe().finally(() => (this.pending = undefined));
      await this.pending;
    }
    if (!this.alive) return [];
    const prefer = PREFER[lane];
    const model = (prefer && this.models.find((m) => prefer.test(m))) || this.models[0];
    return [{ provider: this.provider, model }];
  }
}

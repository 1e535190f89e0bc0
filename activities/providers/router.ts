import type { Logger } from 'pino';
import { AppError } from '../../schema/errors';
import { isPublicLane, PUBLIC_LANES, type PublicLane } from '../../schema/model-config';
import { canFallback, noProviderError, timeoutFault } from './errors';
import type { LocalDiscovery } from './local-discovery';
import { completeOnce, openStream, type Target } from './openai-client';
import type { ProviderSetup } from './provider-config';
import type { ModelRequest, ModelResult, ModelRouter, ModelStreamChunk } from './types';

/**
 * Lane → ordered provider targets, with fallback to the next target on connect errors,
 * 429 and 5xx (for streams: only before the upstream started answering).
 */
export class LaneRouter implements ModelRouter {
  constructor(
    private readonly setup: ProviderSetup | null,
    private readonly local: LocalDiscovery | null,
    private readonly log?: Logger,
    /** Why the configuration could not be loaded (then every call answers 503; the detail is logged, not returned). */
    readonly configError?: string,
  ) {}

  lanes(): Array<{ id: string; provider: string | null; available: boolean }> {
    return PUBLIC_LANES.map((id) => {
      const first = this.setup?.lanes.get(id)?.[0];
      if (first) return { id, provider: first.provider.name, available: true };
      if (this.local?.alive) return { id, provider: this.local.provider.name, available: true };
      return { id, provider: null, available: false };
    });
  }

  hasLane(lane: string): boolean {
    return isPublicLane(lane);
  }

  /** @throws AppError model_not_found / service_unavailable */
  private async targets(lane: string): Promise<Target[]> {
    if (!isPublicLane(lane)) {
      throw new AppError(
        'model_not_found',
        `The model '${lane}' does not exist. GET /v1/models lists the available lanes.`,
      );
    }
    if (this.configError) {
      // The detail names server-side paths: it goes to the log (also at start-up), not to the client.
      this.log?.error(
        { lane, err: this.configError },
        'model call refused: the provider configuration (SVC_CONFIG) is invalid',
      );
      throw new AppError('service_unavailable', 'The provider configuration is invalid; see the service log.', {
        cause: new Error(this.configError),
      });
    }
    const configured = this.setup?.lanes.get(lane as PublicLane) ?? [];
    if (configured.length > 0) return configured;
    const local = this.local && this.setup?.providers.size === 0 ? await this.local.targets(lane as PublicLane) : [];
    if (local.length > 0) return local;
    throw noProviderError(lane);
  }

  private noteFallback(lane: string, t: Target, err: unknown) {
    this.log?.warn(
      { lane, provider: t.provider.name, err: (err as Error).message },
      'model provider failed; trying the next one',
    );
  }

  /**
   * Runs `attempt` on the lane's targets in order, within the request's time limit; a failure that
   * allows fallback (connect error, 429, 5xx) moves on to the next target.
   * @throws the abort reason, the first failure that does not allow fallback, or the last failure
   */
  private async withFallback<T>(
    req: ModelRequest,
    attempt: (t: Target, remainingMs: number) => Promise<T>,
  ): Promise<T> {
    const targets = await this.targets(req.lane);
    const deadline = req.timeoutMs !== undefined ? Date.now() + req.timeoutMs : Infinity;
    let last: unknown;
    for (const t of targets) {
      if (req.signal?.aborted) throw req.signal.reason;
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw last ?? timeoutFault(t.provider.name, req.timeoutMs ?? 0);
      try {
        return await attempt(t, remaining);
      } catch (err) {
        if (!canFallback(err) || req.signal?.aborted) throw err;
        this.noteFallback(req.lane, t, err);
        last = err;
      }
    }
    throw last;
  }

  async complete(req: ModelRequest): Promise<ModelResult> {
    return this.withFallback(req, (t, remaining) => completeOnce(t, req, remaining));
  }

  stream(req: ModelRequest): AsyncIterable<ModelStreamChunk> & { provider: Promise<string> } {
    let settle!: { resolve: (name: string) => void; reject: (err: unknown) => void };
    const provider = new Promise<string>((resolve, reject) => (settle = { resolve, reject }));
    provider.catch(() => undefined); // observed by callers that care; never an unhandled rejection
    // Opened on the first `next()`; after that every call goes straight to the provider's stream
    // (an iterator object rather than a generator around it: no extra layer per chunk).
    let chunks: AsyncGenerator<ModelStreamChunk> | undefined;
    let opening: Promise<void> | undefined;
    const open = () =>
      (opening ??= this.withFallback(req, async (t, remaining) => ({
        opened: await openStream(t, req, remaining),
        name: t.provider.name,
      })).then(
        (o) => {
          chunks = o.opened.chunks;
          settle.resolve(o.name);
        },
        (err: unknown) => {
          settle.reject(err);
          throw err;
        },
      ));
    const it: AsyncIterableIterator<ModelStreamChunk> = {
      next: () => (chunks ? chunks.next() : open().then(() => chunks!.next())),
      // A stream given up while it was still opening is closed once open (its upstream call stops).
      return: (value?: unknown) =>
        chunks
          ? chunks.return(value)
          : opening
            ? opening.then(
                () => chunks!.return(value),
                () => ({ done: true as const, value }),
              )
            : Promise.resolve({ done: true as const, value }),
      [Symbol.asyncIterator]: () => it,
    };
    return Object.assign(it, { provider });
  }
}

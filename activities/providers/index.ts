import type { Logger } from 'pino';
import type { Config } from '../../schema/config';
import { LocalDiscovery, OLLAMA_DEFAULT_URL } from './local-discovery';
import { loadProviderSetup, type ProviderSetup } from './provider-config';
import { LaneRouter } from './router';
import type { ModelRouter } from './types';

export type { ChatMessageIn, ModelRequest, ModelResult, ModelRouter, ModelStreamChunk, ModelUsage } from './types';

export interface ModelRouterOptions {
  log?: Logger;
  /** Where to look for a local Ollama when nothing is configured; `null` turns the probe off. */
  localUrl?: string | null;
}

/**
 * Builds the model router from the Config (OPENAI_BASE_URL/OPENAI_API_KEY and the SVC_CONFIG
 * file). Never throws: an invalid configuration file makes every model call answer 503 (the
 * problem itself is logged and kept in `configError`), so the service still starts. Build it
 * once per process (or per app instance).
 */
export function createModelRouter(
  config: Config,
  opts: ModelRouterOptions = {},
): ModelRouter & { configError?: string } {
  let setup: ProviderSetup | null = null;
  let configError: string | undefined;
  try {
    setup = loadProviderSetup(config);
  } catch (err) {
    configError = (err as Error).message;
    opts.log?.error({ err: configError }, 'model configuration invalid: model calls will answer 503');
  }
  const localUrl = opts.localUrl === undefined ? OLLAMA_DEFAULT_URL : opts.localUrl;
  const local = localUrl ? new LocalDiscovery(localUrl) : null;
  return new LaneRouter(setup, local, opts.log, configError);
}

import { readFileSync } from 'node:fs';
import YAML from 'yaml';
import { z } from 'zod';
import { ConfigError, type Config } from '../../schema/config';
import { SEARCH_INTENTS } from '../../schema/web';

/** One search provider in the SVC_CONFIG file's `search.engines` list. */
export const SearchEngineConfig = z.object({
  name: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,39}$/),
  type: z.enum(['searxng', 'brave', 'tavily']),
  base_url: z
    .url({ protocol: /^https?$/ })
    .describe('SearXNG instance, https://api.search.brave.com or https://api.tavily.com'),
  api_key: z.string().min(1).optional(),
  timeout_ms: z.number().int().min(100).max(60_000).default(5000),
  /** Intents this engine serves (default: all). */
  intents: z.array(z.enum(SEARCH_INTENTS)).optional(),
});
export type SearchEngineConfig = z.infer<typeof SearchEngineConfig>;

const SearchSection = z
  .object({ search: z.object({ engines: z.array(SearchEngineConfig).max(20).default([]) }).optional() })
  .loose();

const cache = new WeakMap<Config, SearchEngineConfig[]>();

/**
 * The search engines of the SVC_CONFIG file (`search.engines`), read once per configuration.
 * The file is the one the model providers come from (YAML or JSON).
 * @throws ConfigError when the file or the section is invalid
 */
export function searchEngines(config: Config): SearchEngineConfig[] {
  const hit = cache.get(config);
  if (hit) return hit;
  let engines: SearchEngineConfig[] = [];
  if (config.configFile) {
    let raw: unknown;
    try {
      raw = YAML.parse(readFileSync(config.configFile, 'utf8')) ?? {};
    } catch (err) {
      throw new ConfigError(
        `SVC_CONFIG: cannot read the search section of ${config.configFile}: ${(err as Error).message.split('\n')[0]}`,
      );
    }
    const parsed = SearchSection.safeParse(raw);
    if (!parsed.success) {
      throw new ConfigError(
        `SVC_CONFIG: search is invalid: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
      );
    }
    engines = parsed.data.search?.engines ?? [];
  }
  cache.set(config, engines);
  return engines;
}

import { readFileSync } from 'node:fs';
import YAML from 'yaml';
import type { Config } from '../../schema/config';
import { ConfigError } from '../../schema/config';
import {
  DEFAULT_UPSTREAM_MODELS,
  laneTargets,
  ModelConfigFile,
  PUBLIC_LANES,
  type PublicLane,
} from '../../schema/model-config';
import type { ProviderDef, Target } from './openai-client';

export const ENV_PROVIDER = 'default';
const OPENAI_URL = 'https://api.openai.com/v1';

export interface ProviderSetup {
  providers: Map<string, ProviderDef & { model?: string }>;
  lanes: Map<PublicLane, Target[]>;
}

/** Reads the SVC_CONFIG file (YAML or JSON: JSON is valid YAML). @throws ConfigError */
function readConfigFile(file: string): ModelConfigFile {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`SVC_CONFIG: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'}).`);
  }
  let raw: unknown;
  try {
    raw = YAML.parse(text) ?? {};
  } catch (err) {
    throw new ConfigError(`SVC_CONFIG: ${file} is neither YAML nor JSON: ${(err as Error).message.split('\n')[0]}`);
  }
  const parsed = ModelConfigFile.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`SVC_CONFIG: ${file} is invalid: ${lines.join('; ')}`);
  }
  return parsed.data;
}

/**
 * Providers and lane targets from OPENAI_BASE_URL/OPENAI_API_KEY and the SVC_CONFIG file.
 * Lanes the file does not map go to the default provider (file `default_provider`, else the
 * environment provider, else the first provider in the file); `nano` follows `micro`.
 * @throws ConfigError on an unreadable or invalid file, or a lane naming an unknown provider
 */
export function loadProviderSetup(config: Config): ProviderSetup {
  const file: ModelConfigFile = config.configFile ? readConfigFile(config.configFile) : { providers: {}, lanes: {} };
  const providers = new Map<string, ProviderDef & { model?: string }>();
  if (config.openai.baseUrl || config.openai.apiKey) {
    providers.set(ENV_PROVIDER, {
      name: ENV_PROVIDER,
      baseUrl: config.openai.baseUrl ?? OPENAI_URL,
      apiKey: config.openai.apiKey,
      timeoutMs: 120_000,
    });
  }
  for (const [name, p] of Object.entries(file.providers)) {
    providers.set(name, {
      name,
      baseUrl: p.base_url,
      apiKey: p.api_key,
      timeoutMs: p.timeout_ms,
      headers: p.headers,
      model: p.model,
    });
  }
  const fallbackName =
    file.default_provider ?? (providers.has(ENV_PROVIDER) ? ENV_PROVIDER : Object.keys(file.providers)[0]);
  if (file.default_provider && !providers.has(file.default_provider)) {
    throw new ConfigError(`SVC_CONFIG: default_provider '${file.default_provider}' is not a configured provider.`);
  }

  const lanes = new Map<PublicLane, Target[]>();
  for (const lane of PUBLIC_LANES) {
    const spec = file.lanes[lane] ?? (lane === 'nano' ? file.lanes.micro : undefined);
    const wanted = spec ? laneTargets(spec) : fallbackName ? [{ provider: fallbackName }] : [];
    const targets: Target[] = wanted.map((w) => {
      const p = providers.get(w.provider);
      if (!p) throw new ConfigError(`SVC_CONFIG: lane '${lane}' names the unknown provider '${w.provider}'.`);
      return { provider: p, model: w.model ?? p.model ?? DEFAULT_UPSTREAM_MODELS[lane] };
    });
    lanes.set(lane, targets);
  }
  return { providers, lanes };
}

import { readFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { AgentsConfigSection } from '../../schema/agents';
import { ConfigError, type Config } from '../../schema/config';

export interface AgentsSettings {
  delegate?: { url: string; token?: string; timeoutMs: number };
  workspaces: {
    root: string;
    keep: 'never' | 'always' | 'on_failure';
    shell: { timeoutS: number; memoryMb: number; cpuS: number };
  };
}

const cache = new WeakMap<Config, AgentsSettings>();

/**
 * The `agents` and `workspaces` sections of the SVC_CONFIG file (the one the model providers and
 * search engines come from), read once per configuration.
 * @throws ConfigError when the file or a section is invalid
 */
export function agentsSettings(config: Config): AgentsSettings {
  const hit = cache.get(config);
  if (hit) return hit;
  let raw: unknown = {};
  if (config.configFile) {
    try {
      raw = YAML.parse(readFileSync(config.configFile, 'utf8')) ?? {};
    } catch (err) {
      throw new ConfigError(`SVC_CONFIG: cannot read ${config.configFile}: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  const parsed = AgentsConfigSection.safeParse(raw);
  if (!parsed.success) {
    throw new ConfigError(
      `SVC_CONFIG: agents/workspaces is invalid: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  }
  const d = parsed.data.agents?.delegate;
  const w = parsed.data.workspaces;
  const settings: AgentsSettings = {
    delegate: d ? { url: d.url, token: d.token, timeoutMs: d.timeout_ms } : undefined,
    workspaces: {
      root: path.resolve(w?.root ?? path.join(config.dataDir, 'workspaces')),
      keep: w?.keep ?? 'never',
      shell: {
        timeoutS: w?.shell.timeout_s ?? 20,
        memoryMb: w?.shell.memory_mb ?? 256,
        cpuS: w?.shell.cpu_s ?? 10,
      },
    },
  };
  cache.set(config, settings);
  return settings;
}

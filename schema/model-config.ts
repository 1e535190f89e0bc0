import { z } from 'zod';

/** Public lanes: the only model ids a client ever sees. `nano` is the same lane as `micro` unless mapped. */
export const PUBLIC_LANES = [
  'svc-oracle',
  'mid',
  'mid-strong',
  'micro',
  'nano',
  'slm-fast',
  'slm-code',
  'slm-reason',
] as const;
export type PublicLane = (typeof PUBLIC_LANES)[number];
export const DEFAULT_LANE: PublicLane = 'svc-oracle';

export function isPublicLane(id: string): id is PublicLane {
  return (PUBLIC_LANES as readonly string[]).includes(id);
}

/** Upstream model per lane when the config names none (OpenAI names; any OpenAI-compatible server accepts them or maps them). */
export const DEFAULT_UPSTREAM_MODELS: Record<PublicLane, string> = {
  'svc-oracle': 'gpt-4o',
  'mid-strong': 'gpt-4o',
  mid: 'gpt-4o-mini',
  micro: 'gpt-4o-mini',
  nano: 'gpt-4o-mini',
  'slm-fast': 'gpt-4o-mini',
  'slm-code': 'gpt-4o-mini',
  'slm-reason': 'gpt-4o-mini',
};

const ProviderName = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,39}$/, 'lower-case letters, digits, _ and - (at most 40)');

const ProviderFile = z.object({
  base_url: z.url({ protocol: /^https?$/ }).describe('OpenAI-compatible base URL, usually ending in /v1.'),
  api_key: z.string().min(1).optional(),
  /** Per-attempt time limit (non-stream) and idle limit between streamed chunks. */
  timeout_ms: z.number().int().min(100).max(600_000).default(120_000),
  headers: z.record(z.string(), z.string()).optional(),
  /** Upstream model used for lanes mapped to this provider without a model. */
  model: z.string().min(1).optional(),
});

const TargetObject = z.object({ provider: ProviderName, model: z.string().min(1).optional() });
/** `provider/model` shorthand: the provider name stops at the first slash (model ids may contain slashes). */
const TargetString = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,39}(\/.+)?$/, 'use "provider" or "provider/model"')
  .transform((s) => {
    const i = s.indexOf('/');
    return i < 0 ? { provider: s } : { provider: s.slice(0, i), model: s.slice(i + 1) };
  });
const Target = z.union([TargetString, TargetObject]);

const LaneFile = z.union([
  TargetString,
  TargetObject.extend({ fallbacks: z.array(Target).max(5).optional() }),
  z.array(Target).min(1).max(6),
]);

/** The SVC_CONFIG file (YAML or JSON). Every part is optional. */
export const ModelConfigFile = z
  .object({
    providers: z.record(ProviderName, ProviderFile).default({}),
    lanes: z.partialRecord(z.enum(PUBLIC_LANES), LaneFile).default({}),
    /** Provider for lanes the file does not map (default: the OPENAI_BASE_URL provider, else the first listed). */
    default_provider: ProviderName.optional(),
  })
  .loose();
export type ModelConfigFile = z.infer<typeof ModelConfigFile>;

export interface LaneTargetSpec {
  provider: string;
  model?: string;
}

/** Normalises any lane form to an ordered list: first the primary, then the fallbacks. */
export function laneTargets(lane: z.infer<typeof LaneFile>): LaneTargetSpec[] {
  if (Array.isArray(lane)) return lane;
  if ('fallbacks' in lane && lane.fallbacks) return [{ provider: lane.provider, model: lane.model }, ...lane.fallbacks];
  return [{ provider: lane.provider, model: lane.model }];
}

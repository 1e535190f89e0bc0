import { z } from 'zod';

const port = z.coerce.number().int().min(0).max(65535);
const url = z.url({ protocol: /^https?$/ });
const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

/** Every environment variable the service reads, with defaults. Parsed once at start. */
export const EnvSchema = z.object({
  PORT: port.default(8080),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
    .optional(),
  TEMPORAL_ADDRESS: optionalString.pipe(
    z.string().regex(/^[^\s:]+:\d+$/, 'must be host:port').optional(),
  ),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('svc-runtime'),
  TEMPORAL_CLI_PATH: optionalString,
  TEMPORAL_DEV_PORT: port.default(7233),
  TEMPORAL_UI_PORT: port.optional(),
  SVC_DATA_DIR: z.string().min(1).default('./.data'),
  SVC_CACHE_DIR: optionalString,
  SVC_REGISTRATION_TOKEN: optionalString,
  SVC_CONFIG: optionalString,
  OPENAI_BASE_URL: optionalString.pipe(url.optional()),
  OPENAI_API_KEY: optionalString,
  SVC_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  SVC_BODY_LIMIT: z.coerce.number().int().min(1024).default(1024 * 1024),
  SVC_UPLOAD_LIMIT: z.coerce.number().int().min(1024).default(20 * 1024 * 1024),
  SVC_ALLOW_PRIVATE_FETCH: z
    .enum(['true', 'false', '1', '0'])
    .default('false')
    .transform((v) => v === 'true' || v === '1'),
  SVC_PUBLIC_URL: optionalString.pipe(url.optional()),
  SVC_EMBEDDING_MODEL: z.string().min(1).max(200).default('text-embedding-3-small'),
  SVC_LIMIT_SYNC_MS: z.coerce.number().int().min(10).max(60_000).default(200),
  SVC_LIMIT_MINUTE_MS: z.coerce.number().int().min(100).default(60_000),
  SVC_LIMIT_DAY_MS: z.coerce.number().int().min(100).default(86_400_000),
  SVC_GATEWAY_LISTEN_IDLE_MS: z.coerce.number().int().min(100).default(30_000),
});

export interface Config {
  port: number;
  host: string;
  databaseUrl: string;
  /** True when DATABASE_URL was given: then no embedded fallback is ever used. */
  databaseUrlExplicit: boolean;
  temporal: {
    address?: string;
    namespace: string;
    taskQueue: string;
    cliPath?: string;
    devPort: number;
    uiPort: number;
  };
  dataDir: string;
  cacheDir?: string;
  registrationToken?: string;
  configFile?: string;
  openai: { baseUrl?: string; apiKey?: string; embeddingModel: string };
  logLevel: z.infer<typeof EnvSchema>['SVC_LOG_LEVEL'];
  bodyLimit: number;
  uploadLimit: number;
  allowPrivateFetch: boolean;
  publicUrl?: string;
  /** Gateway: rate-counter sync interval, window lengths (shortened in tests), LISTEN idle close. */
  gateway: { syncMs: number; minuteMs: number; dayMs: number; listenerIdleMs: number };
}

export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/svc';

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/**
 * Parses the environment once. A bad value throws a ConfigError naming each variable.
 * @throws ConfigError
 */
export function parseConfig(env: Record<string, string | undefined>): Config {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  const e = parsed.data;
  return {
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL ?? DEFAULT_DATABASE_URL,
    databaseUrlExplicit: e.DATABASE_URL !== undefined,
    temporal: {
      address: e.TEMPORAL_ADDRESS,
      namespace: e.TEMPORAL_NAMESPACE,
      taskQueue: e.TEMPORAL_TASK_QUEUE,
      cliPath: e.TEMPORAL_CLI_PATH,
      devPort: e.TEMPORAL_DEV_PORT,
      uiPort: e.TEMPORAL_UI_PORT ?? Math.min(65535, e.TEMPORAL_DEV_PORT + 1000),
    },
    dataDir: e.SVC_DATA_DIR,
    cacheDir: e.SVC_CACHE_DIR,
    registrationToken: e.SVC_REGISTRATION_TOKEN,
    configFile: e.SVC_CONFIG,
    openai: { baseUrl: e.OPENAI_BASE_URL, apiKey: e.OPENAI_API_KEY, embeddingModel: e.SVC_EMBEDDING_MODEL },
    logLevel: e.SVC_LOG_LEVEL,
    bodyLimit: e.SVC_BODY_LIMIT,
    uploadLimit: e.SVC_UPLOAD_LIMIT,
    allowPrivateFetch: e.SVC_ALLOW_PRIVATE_FETCH,
    publicUrl: e.SVC_PUBLIC_URL,
    gateway: { syncMs: e.SVC_LIMIT_SYNC_MS, minuteMs: e.SVC_LIMIT_MINUTE_MS, dayMs: e.SVC_LIMIT_DAY_MS, listenerIdleMs: e.SVC_GATEWAY_LISTEN_IDLE_MS },
  };
}

import { z } from 'zod';
import { allowEntry, type PrivateFetchPolicy } from '../activities/net/ssrf';

const port = z.coerce.number().int().min(0).max(65535);
const url = z.url({ protocol: /^https?$/ });
const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

/** Upper bound of SVC_API_PROCESSES (and of `auto`). */
export const MAX_API_PROCESSES = 16;

/** Every environment variable the service reads, with defaults. Parsed once at start. */
export const EnvSchema = z.object({
  PORT: port.default(8080),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
    .optional(),
  TEMPORAL_ADDRESS: optionalString.pipe(
    z
      .string()
      .regex(/^[^\s:]+:\d+$/, 'must be host:port')
      .optional(),
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
  /** Unset: pretty on a terminal, JSON otherwise. */
  SVC_LOG_FORMAT: optionalString.pipe(z.enum(['json', 'pretty']).optional()),
  /** `npm start` only, loopback only: mint and print a development key with every scope. */
  SVC_DEV_KEY: z
    .enum(['true', 'false', '1', '0'])
    .default('false')
    .transform((v) => v === 'true' || v === '1'),
  SVC_BODY_LIMIT: z.coerce
    .number()
    .int()
    .min(1024)
    .default(1024 * 1024),
  // The model routes' bodies (a conversation resent whole each turn, images as data URLs): their own, larger limit.
  SVC_CHAT_BODY_LIMIT: z.coerce
    .number()
    .int()
    .min(1024)
    .default(32 * 1024 * 1024),
  // At most 255 MiB, as SVC_UPLOADS_FILE_LIMIT: an uploaded file kept in /v1/files is read back as hex text.
  SVC_UPLOAD_LIMIT: z.coerce
    .number()
    .int()
    .min(1024)
    .max(255 * 1024 * 1024)
    .default(20 * 1024 * 1024),
  // Requests one batch (/v1/batches) may hold, and how many of a batch's requests a worker answers at once.
  SVC_BATCH_MAX_REQUESTS: z.coerce.number().int().min(1).max(50_000).default(10_000),
  SVC_BATCH_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  SVC_BATCH_MAX_RUNNING: z.coerce.number().int().min(1).max(1000).default(10),
  // How long a batch may run before it expires (OpenAI's completion_window, 24h), in seconds.
  SVC_BATCH_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(86_400),
  // What one tenant's files (/v1/files) may hold in all, in bytes.
  SVC_FILES_TENANT_LIMIT: z.coerce
    .number()
    .int()
    .min(1024)
    .default(1024 * 1024 * 1024),
  // What one tenant's vector stores (/v1/vector_stores) may hold in all (their files' chunks and vectors), in bytes.
  SVC_VECTOR_STORES_TENANT_LIMIT: z.coerce
    .number()
    .int()
    .min(1024)
    .default(2 * 1024 * 1024 * 1024),
  // The largest file an Upload (/v1/uploads) may assemble, in bytes. At most 255 MiB: the service reads a stored
  // file's bytea as hex text, and a string over V8's 536,870,888 characters (a file over ~256 MiB) cannot be made.
  SVC_UPLOADS_FILE_LIMIT: z.coerce
    .number()
    .int()
    .min(1024)
    .max(255 * 1024 * 1024)
    .default(128 * 1024 * 1024),
  // The data-segment cap of each PDF/DOCX reading process (activities/web/extract-pool.ts), in MiB; 0: no cap.
  // Node alone reserves ~520 MiB of it on start, so the floor is 1024.
  SVC_EXTRACT_MEMORY_MB: z.coerce
    .number()
    .int()
    .refine((v) => v === 0 || (v >= 1024 && v <= 1_048_576), 'must be 0 (no cap) or 1024 to 1048576')
    .default(2048),
  // true/1 = every private address; false/0 = none; else a comma-separated allow list of addresses,
  // CIDRs and host names (activities/net/ssrf.ts `PrivateFetchPolicy`).
  SVC_ALLOW_PRIVATE_FETCH: z
    .string()
    .default('false')
    .transform((v, ctx): boolean | string[] => {
      const t = v.trim().toLowerCase();
      if (t === 'true' || t === '1') return true;
      if (t === 'false' || t === '0' || t === '') return false;
      const list = t.split(/[\s,]+/).filter(Boolean);
      const bad = list.find((e) => !allowEntry(e));
      if (bad) {
        ctx.addIssue({
          code: 'custom',
          message: `"${bad}" is not true, false, an IP address, a CIDR or a host name`,
        });
        return z.NEVER;
      }
      return list;
    }),
  SVC_PUBLIC_URL: optionalString.pipe(url.optional()),
  SVC_EMBEDDING_MODEL: z.string().min(1).max(200).default('text-embedding-3-small'),
  SVC_MODERATION_MODEL: z.string().min(1).max(200).default('omni-moderation-latest'),
  SVC_SPEECH_MODEL: z.string().min(1).max(200).default('gpt-4o-mini-tts'),
  SVC_TRANSCRIPTION_MODEL: z.string().min(1).max(200).default('whisper-1'),
  SVC_TRANSLATION_MODEL: z.string().min(1).max(200).default('whisper-1'),
  /** How long one audio request to the provider may take in all (a speech stream included). */
  SVC_AUDIO_TIMEOUT_MS: z.coerce.number().int().min(1000).max(3_600_000).default(300_000),
  /** How long a stopping worker lets activities in flight finish (ms). */
  SVC_WORKER_SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).max(600_000).default(10_000),
  // Edge limits (issue 10): request bodies must arrive in time; headers too; connections per client address (0 = no cap).
  SVC_BODY_TIMEOUT_MS: z.coerce.number().int().min(100).default(60_000),
  SVC_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).default(20_000),
  SVC_MAX_CONNECTIONS_PER_ADDRESS: z.coerce.number().int().min(0).default(256),
  /** Answer the model routes' plain JSON requests on the raw HTTP server, before Koa (api/fast-path.ts); false = all through Koa. */
  SVC_HTTP_FAST_PATH: z.enum(['true', 'false', '1', '0']).default('true'),
  SVC_CORS_ORIGINS: z
    .string()
    .max(4000)
    .default('')
    .transform((v, ctx): '*' | string[] => {
      const t = v.trim();
      if (t === '*') return '*';
      const list = t.split(/[\s,]+/).filter(Boolean);
      const bad = list.find(
        (o) => !/^https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?$|^https?:\/\/\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/.test(o),
      );
      if (bad) {
        ctx.addIssue({
          code: 'custom',
          message: `"${bad}" is not * or an origin (scheme://host[:port], no path)`,
        });
        return z.NEVER;
      }
      return list.map((o) => o.toLowerCase());
    }),
  SVC_SMTP_URL: optionalString.pipe(z.url({ protocol: /^smtps?$/ }).optional()),
  SVC_SMTP_FROM: optionalString.pipe(z.email().optional()),
  SVC_EMAIL_RATE_PER_MINUTE: z.coerce.number().int().min(1).max(100_000).default(60),
  SVC_IMAGE_ROOT: optionalString,
  SVC_IMAGE_URL_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(60)
    .max(7 * 24 * 3600)
    .default(3600),
  SVC_WEB_CACHE_TTL: z.coerce
    .number()
    .int()
    .min(0)
    .max(30 * 24 * 3600)
    .default(3600),
  SVC_REPO_ROOTS: optionalString,
  SVC_BROWSER: z.enum(['auto', 'on', 'off']).default('auto'),
  SVC_CHROMIUM_PATH: z.string().min(1).default('/usr/bin/chromium'),
  SVC_BROWSER_MAX_SESSIONS_PER_WORKER: z.coerce.number().int().min(1).max(1000).default(8),
  SVC_BROWSER_MAX_SESSIONS_PER_TENANT: z.coerce.number().int().min(1).max(1000).default(4),
  SVC_BROWSER_IDLE_TIMEOUT_S: z.coerce.number().int().min(1).max(86_400).default(600),
  SVC_BROWSER_MAX_IDLE_TIMEOUT_S: z.coerce.number().int().min(1).max(86_400).default(3600),
  SVC_BROWSER_ALLOW_HOSTS: optionalString,
  SVC_BROWSER_HEARTBEAT_S: z.coerce.number().int().min(0).max(3600).default(15),
  SVC_BROWSER_DIRECT: z.enum(['true', 'false', '1', '0']).default('true'),
  SVC_BROWSER_WORKER_HOST: z.string().min(1).default('127.0.0.1'),
  SVC_BROWSER_WORKER_PORT: port.default(0),
  SVC_BROWSER_WORKER_ADVERTISE: optionalString,
  SVC_STATE_KEY: optionalString.pipe(z.string().min(16, 'must be at least 16 characters').optional()),
  SVC_DAEMON_POLLER_FRESH_S: z.coerce.number().int().min(5).max(3600).default(90),
  SVC_LIMIT_SYNC_MS: z.coerce.number().int().min(10).max(60_000).default(200),
  SVC_LIMIT_MINUTE_MS: z.coerce.number().int().min(100).default(60_000),
  SVC_LIMIT_DAY_MS: z.coerce.number().int().min(100).default(86_400_000),
  SVC_GATEWAY_LISTEN_IDLE_MS: z.coerce.number().int().min(100).default(30_000),
  /**
   * `npm run api` only: how many API processes share the listen port (node:cluster), each a full replica.
   * `auto` = the cores available to this process (at most 16).
   */
  SVC_API_PROCESSES: z
    .string()
    .default('1')
    .transform((v, ctx): number | 'auto' => {
      const t = v.trim().toLowerCase();
      if (t === 'auto') return 'auto';
      const n = Number(t);
      if (t !== '' && Number.isInteger(n) && n >= 1 && n <= MAX_API_PROCESSES) return n;
      ctx.addIssue({ code: 'custom', message: `must be auto or a whole number from 1 to ${MAX_API_PROCESSES}` });
      return z.NEVER;
    }),
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
  openai: {
    baseUrl?: string;
    apiKey?: string;
    embeddingModel: string;
    moderationModel: string;
    /** SVC_SPEECH_MODEL, SVC_TRANSCRIPTION_MODEL, SVC_TRANSLATION_MODEL: the provider's audio models. */
    speechModel: string;
    transcriptionModel: string;
    translationModel: string;
    /** SVC_AUDIO_TIMEOUT_MS */
    audioTimeoutMs: number;
  };
  logLevel: z.infer<typeof EnvSchema>['SVC_LOG_LEVEL'];
  logFormat?: 'json' | 'pretty';
  devKey: boolean;
  bodyLimit: number;
  /** SVC_CHAT_BODY_LIMIT: the body limit of the routes that take a conversation (`RouteSpec.conversation`). */
  chatBodyLimit: number;
  uploadLimit: number;
  /** SVC_BATCH_MAX_REQUESTS, SVC_BATCH_CONCURRENCY, SVC_BATCH_MAX_RUNNING and SVC_BATCH_WINDOW_SECONDS. */
  batch: { maxRequests: number; concurrency: number; maxRunning: number; windowSeconds: number };
  /** SVC_VECTOR_STORES_TENANT_LIMIT: bytes one tenant's vector stores may hold. */
  vectorStoresTenantLimit: number;
  /** SVC_FILES_TENANT_LIMIT: bytes one tenant's stored files may hold. */
  filesTenantLimit: number;
  /** SVC_UPLOADS_FILE_LIMIT: bytes one file assembled by an Upload (/v1/uploads) may hold. */
  uploadsFileLimit: number;
  /** SVC_EXTRACT_MEMORY_MB */
  extractMemoryMb: number;
  /** true = all private addresses, a list = these addresses/CIDRs/hosts only, false = none. */
  allowPrivateFetch: PrivateFetchPolicy;
  publicUrl?: string;
  workerShutdownGraceMs: number;
  /** Edge limits of the HTTP server (api/http-server.ts, api/middleware/body-timeout.ts). */
  http: {
    bodyTimeoutMs: number;
    headersTimeoutMs: number;
    maxConnectionsPerAddress: number;
    /** Model routes' plain JSON requests answered before Koa, same middleware (api/fast-path.ts); default true. */
    fastPath?: boolean;
    /** SVC_CORS_ORIGINS: browser origins allowed to call the API (`*`: any); empty: no CORS headers. */
    corsOrigins?: '*' | string[];
  };
  /** Outgoing email (issue 15): SMTP pool URL and From address; unset → email routes answer 503. */
  email: { smtpUrl?: string; from?: string; ratePerMinute: number };
  /** Media (issue 15): root that `image_path` must resolve inside; TTL of generated-image URLs. */
  media: { imageRoot?: string; imageUrlTtlSeconds: number };
  /** Web capabilities: web-fetch cache TTL (seconds) and the folders repo-report may read (SVC_REPO_ROOTS, `:`-separated). */
  web: { cacheTtlSeconds: number; repoRoots: string[] };
  browser: {
    /** auto: a worker hosts browser sessions when Chromium is found; on: it must; off: never. */
    mode: 'auto' | 'on' | 'off';
    chromiumPath: string;
    maxSessionsPerWorker: number;
    maxSessionsPerTenant: number;
    idleTimeoutS: number;
    maxIdleTimeoutS: number;
    /** `host` or `host:port` entries the browser may reach even when private fetches are refused. */
    allowHosts: string[];
    /** Seconds between a session's owner liveness checks while idle (0: only commands notice a dead worker). */
    heartbeatS: number;
    /**
     * The API sends commands straight to the owning worker's command endpoint (authenticated by a
     * per-worker token kept in `browser_workers`); false: every command is a workflow update.
     */
    direct: boolean;
    /** Where a browser worker's command endpoint listens, and the host it advertises (default: the listen host). */
    workerHost: string;
    workerPort: number;
    workerAdvertise?: string;
  };
  /** Key material for AES-GCM encryption of saved browser states and checkpoints. */
  stateKey?: string;
  /** Gateway: rate-counter sync interval, window lengths (shortened in tests), LISTEN idle close. */
  gateway: { syncMs: number; minuteMs: number; dayMs: number; listenerIdleMs: number };
  /** `GET /v1/daemons`: a Temporal poller seen within this many seconds counts as up. */
  daemons: { pollerFreshS: number };
  /**
   * `npm run api`: API processes sharing the port through node:cluster (1 = this process serves alone);
   * `auto` is resolved by the entry (workers/api-cluster.ts `apiProcessCount`).
   */
  apiProcesses: number | 'auto';
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
    openai: {
      baseUrl: e.OPENAI_BASE_URL,
      apiKey: e.OPENAI_API_KEY,
      embeddingModel: e.SVC_EMBEDDING_MODEL,
      moderationModel: e.SVC_MODERATION_MODEL,
      speechModel: e.SVC_SPEECH_MODEL,
      transcriptionModel: e.SVC_TRANSCRIPTION_MODEL,
      translationModel: e.SVC_TRANSLATION_MODEL,
      audioTimeoutMs: e.SVC_AUDIO_TIMEOUT_MS,
    },
    logLevel: e.SVC_LOG_LEVEL,
    logFormat: e.SVC_LOG_FORMAT,
    devKey: e.SVC_DEV_KEY,
    bodyLimit: e.SVC_BODY_LIMIT,
    chatBodyLimit: e.SVC_CHAT_BODY_LIMIT,
    uploadLimit: e.SVC_UPLOAD_LIMIT,
    filesTenantLimit: e.SVC_FILES_TENANT_LIMIT,
    vectorStoresTenantLimit: e.SVC_VECTOR_STORES_TENANT_LIMIT,
    uploadsFileLimit: e.SVC_UPLOADS_FILE_LIMIT,
    batch: {
      maxRequests: e.SVC_BATCH_MAX_REQUESTS,
      concurrency: e.SVC_BATCH_CONCURRENCY,
      maxRunning: e.SVC_BATCH_MAX_RUNNING,
      windowSeconds: e.SVC_BATCH_WINDOW_SECONDS,
    },
    extractMemoryMb: e.SVC_EXTRACT_MEMORY_MB,
    allowPrivateFetch: e.SVC_ALLOW_PRIVATE_FETCH,
    publicUrl: e.SVC_PUBLIC_URL,
    workerShutdownGraceMs: e.SVC_WORKER_SHUTDOWN_GRACE_MS,
    http: {
      bodyTimeoutMs: e.SVC_BODY_TIMEOUT_MS,
      headersTimeoutMs: e.SVC_HEADERS_TIMEOUT_MS,
      maxConnectionsPerAddress: e.SVC_MAX_CONNECTIONS_PER_ADDRESS,
      fastPath: e.SVC_HTTP_FAST_PATH === 'true' || e.SVC_HTTP_FAST_PATH === '1',
      corsOrigins: e.SVC_CORS_ORIGINS,
    },
    email: { smtpUrl: e.SVC_SMTP_URL, from: e.SVC_SMTP_FROM, ratePerMinute: e.SVC_EMAIL_RATE_PER_MINUTE },
    media: { imageRoot: e.SVC_IMAGE_ROOT, imageUrlTtlSeconds: e.SVC_IMAGE_URL_TTL_SECONDS },
    web: {
      cacheTtlSeconds: e.SVC_WEB_CACHE_TTL,
      repoRoots: (e.SVC_REPO_ROOTS ?? '')
        .split(':')
        .map((r) => r.trim())
        .filter(Boolean),
    },
    browser: {
      mode: e.SVC_BROWSER,
      chromiumPath: e.SVC_CHROMIUM_PATH,
      maxSessionsPerWorker: e.SVC_BROWSER_MAX_SESSIONS_PER_WORKER,
      maxSessionsPerTenant: e.SVC_BROWSER_MAX_SESSIONS_PER_TENANT,
      idleTimeoutS: e.SVC_BROWSER_IDLE_TIMEOUT_S,
      maxIdleTimeoutS: Math.max(e.SVC_BROWSER_MAX_IDLE_TIMEOUT_S, e.SVC_BROWSER_IDLE_TIMEOUT_S),
      allowHosts: (e.SVC_BROWSER_ALLOW_HOSTS ?? '')
        .split(',')
        .map((h) => h.trim().toLowerCase())
        .filter(Boolean),
      heartbeatS: e.SVC_BROWSER_HEARTBEAT_S,
      direct: e.SVC_BROWSER_DIRECT === 'true' || e.SVC_BROWSER_DIRECT === '1',
      workerHost: e.SVC_BROWSER_WORKER_HOST,
      workerPort: e.SVC_BROWSER_WORKER_PORT,
      workerAdvertise: e.SVC_BROWSER_WORKER_ADVERTISE,
    },
    stateKey: e.SVC_STATE_KEY,
    gateway: {
      syncMs: e.SVC_LIMIT_SYNC_MS,
      minuteMs: e.SVC_LIMIT_MINUTE_MS,
      dayMs: e.SVC_LIMIT_DAY_MS,
      listenerIdleMs: e.SVC_GATEWAY_LISTEN_IDLE_MS,
    },
    daemons: { pollerFreshS: e.SVC_DAEMON_POLLER_FRESH_S },
    apiProcesses: e.SVC_API_PROCESSES,
  };
}

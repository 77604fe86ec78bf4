/**
 * The api's settings, parsed once at start-up (STYLE §4). Keys are the environment variable names;
 * each `.describe()` text is the help column of docs/configuration.md.
 */
import { z } from 'zod';
import { commonEnv, envPort, loadConfigOrExit, parseConfig } from '@uda/shared/config';
import { objectStoreEnv } from '@uda/shared/object-store';
import { DEFAULT_LIVE_CONFIG, LIVE_CONFIG_HELP } from './live/setup.ts';

const ms = (max: number) => z.coerce.number().int().min(0).max(max);
const live = <K extends keyof typeof LIVE_CONFIG_HELP>(key: K) => LIVE_CONFIG_HELP[key];

const secret = (help: string) => z.string().min(32, 'must be at least 32 characters').optional().describe(help);

export const apiEnv = z
  .object({
    ...commonEnv,
    HOST: z.string().default('127.0.0.1').describe('Address the public API listens on; loopback unless set (the image and the chart set 0.0.0.0)'),
    PORT: envPort.default(8080).describe('Public API port (0 picks a free port)'),
    METRICS_PORT: envPort.default(9090).describe('Port for /healthz, /readyz and /metrics (0 picks a free port)'),
    ADMIN_HOST: z.string().default('127.0.0.1').describe('Address the admin API listens on; keep it private'),
    ADMIN_PORT: envPort.default(8081).describe('Admin API port (0 picks a free port)'),
    ADMIN_TOKEN: secret('Bearer token for the admin API; unset generates one into DATA_DIR/admin-token'),
    DATABASE_URL: z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
      .optional()
      .describe('PostgreSQL URL for accounts, keys and the ledger; unset uses embedded PGlite under DATA_DIR'),
    DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(200).default(10).describe('PostgreSQL pool size per process'),
    REDIS_URL: z
      .string()
      .regex(/^rediss?:\/\//, 'must be a redis:// URL')
      .optional()
      .describe('Redis URL for rate limits shared by all pods; unset uses in-process limiters'),
    REDIS_KEY_PREFIX: z.string().default('uda:').describe('Prefix of every Redis key this service writes'),
    TRUST_PROXY_HOPS: z.coerce
      .number()
      .int()
      .min(0)
      .max(10)
      .default(0)
      .describe('Number of reverse-proxy hops in front of the API whose X-Forwarded-For is trusted'),
    KEY_PEPPER: secret('Server-side HMAC pepper for API key lookup hashes; required with DATABASE_URL, else generated into DATA_DIR'),
    KEY_ENCRYPTION_KEY: z
      .string()
      .regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hex characters (32 bytes)')
      .optional()
      .describe('AES-256-GCM key (64 hex chars) for revealable API keys; required with DATABASE_URL, else generated into DATA_DIR'),
    KEY_CACHE_TTL_MS: z.coerce
      .number()
      .int()
      .min(0)
      .max(300_000)
      .default(30_000)
      .describe(
        'How long a pod trusts a cached API key lookup if a change announcement is lost (changes reach every pod within a second over Redis pub/sub; 1 s while the subscription is down)',
      ),
    KEY_CACHE_SIZE: z.coerce.number().int().min(1).max(1_000_000).default(10_000).describe('API keys each pod caches (and unknown keys, separately)'),
    CORS_ORIGINS: z.string().default('*').describe('Comma-separated origins allowed by CORS on public data routes, or *'),
    ...objectStoreEnv,
    OBJECT_CACHE_DIR: z
      .string()
      .optional()
      .describe('Folder of the pod disk cache of export and result files; unset means DATA_DIR/object-cache. A missing or unwritable folder disables the cache'),
    OBJECT_CACHE_MAX_MB: z.coerce
      .number()
      .int()
      .min(0)
      .max(1_048_576)
      .default(1024)
      .describe('Most MB the object cache holds on disk (least recently used files go first); 0 disables it. Used with S3 only'),
    OBJECT_CACHE_WARM_CONCURRENCY: z.coerce
      .number()
      .int()
      .min(0)
      .max(2)
      .default(1)
      .describe(
        'Copies at once (1 or 2) that warm the object cache with each newly published export version, most downloaded files first and within OBJECT_CACHE_MAX_MB; 0 turns warming off',
      ),
    USAGE_LOG_RETENTION_DAYS: z.coerce
      .number()
      .int()
      .min(1)
      .max(3_650)
      .default(35)
      .describe('Days the usage log (one Parquet record per paid request, under usage/ in the bucket) is kept; refunds, disputes and the reconciliation read it'),
    OBJECT_CACHE_WARM_POLL_MS: ms(3_600_000)
      .min(50)
      .default(15_000)
      .describe('How often each pod reads the export manifest to warm its object cache with a new version'),
    QUERY_RUNNER_URLS: z
      .string()
      .default('http://127.0.0.1:8090')
      .describe('Comma-separated query-runner base URLs, used when QUERY_RUNNER_SERVICE is unset'),
    QUERY_RUNNER_TOKEN: secret("Bearer token sent to every query-runner (the runners' RUNNER_TOKEN; a Secret in the chart); unset reads or generates DATA_DIR/runner-token"),
    QUERY_RUNNER_SERVICE: z
      .string()
      .optional()
      .describe('In Kubernetes: the runner Service whose EndpointSlices list the ready runners (in-cluster credentials)'),
    QUERY_RUNNER_PORT_NAME: z.string().default('http').describe('Named port of the runner API in its EndpointSlices'),
    POD_NAMESPACE: z.string().default('default').describe('Namespace of the runner Service (set from the downward API)'),
    QUERY_RUNNER_TIMEOUT_MS: ms(600_000)
      .default(35_000)
      .describe("Deadline of one call to a runner; longer than the runner's QUERY_TIMEOUT_MS so the runner reports timeouts"),
    UPSTREAM_CONTACT_EMAIL: z.string().default(DEFAULT_LIVE_CONFIG.contactEmail).describe(live('contactEmail')),
    UPSTREAM_TIMEOUT_MS: ms(120_000).default(DEFAULT_LIVE_CONFIG.timeoutMs).describe(live('timeoutMs')),
    WIKIPEDIA_BASE_URL: z.url().default(DEFAULT_LIVE_CONFIG.wikipediaBaseUrl).describe(live('wikipediaBaseUrl')),
    WIKIPEDIA_REST_BASE_URL: z.string().default(DEFAULT_LIVE_CONFIG.wikipediaRestBaseUrl).describe(live('wikipediaRestBaseUrl')),
    ARXIV_BASE_URL: z.url().default(DEFAULT_LIVE_CONFIG.arxivBaseUrl).describe(live('arxivBaseUrl')),
    STACKEXCHANGE_BASE_URL: z.url().default(DEFAULT_LIVE_CONFIG.stackexchangeBaseUrl).describe(live('stackexchangeBaseUrl')),
    STACKEXCHANGE_KEY: z.string().optional().describe(live('stackexchangeKey')),
    PYPI_BASE_URL: z.url().default(DEFAULT_LIVE_CONFIG.pypiBaseUrl).describe(live('pypiBaseUrl')),
    OPENALEX_BASE_URL: z.url().default(DEFAULT_LIVE_CONFIG.openalexBaseUrl).describe(live('openalexBaseUrl')),
    OPENALEX_API_KEY: z.string().optional().describe(live('openalexApiKey')),
    SHUTDOWN_GRACE_MS: z.coerce
      .number()
      .int()
      .min(0)
      .max(120_000)
      .default(10_000)
      .describe('On SIGTERM: time allowed for in-flight requests to finish'),
    SMTP_URL: z
      .string()
      .regex(/^smtps?:\/\//, 'must be an smtp:// or smtps:// URL')
      .optional()
      .describe(
        'SMTP server for verification and password-reset emails, e.g. smtps://user:pass@mail.example.com:465 (a Secret in the chart); unset writes each email as an .eml file under DATA_DIR/outbox and logs its path and link',
      ),
    MAIL_FROM: z.string().min(3).default('Unified Data API <no-reply@localhost>').describe('From address of the emails the service sends'),
    PUBLIC_URL: z
      .url()
      .regex(/^https?:\/\//, 'must be an http(s):// URL')
      .optional()
      .describe(
        'Public base URL of the service, used in the links of emails (e.g. https://data.example.com); unset uses the address the API listens on, which suits the embedded default only',
      ),
    SHEETS_MAX_UPLOAD_MB: z.coerce
      .number()
      .int()
      .min(1)
      .max(1024)
      .default(50)
      .describe('Largest connected-sheet upload in MB; larger uploads get 413 and nothing is stored. Keep equal to the worker’s'),
  })
  .superRefine((env, ctx) => {
    // Every pod must hash and encrypt keys alike, so shared storage needs shared secrets.
    if (!env.DATABASE_URL) return;
    for (const name of ['KEY_PEPPER', 'KEY_ENCRYPTION_KEY'] as const) {
      if (!env[name]) ctx.addIssue({ code: 'custom', path: [name], message: 'is required when DATABASE_URL is set' });
    }
  });

export type ApiConfig = z.infer<typeof apiEnv>;

export function parseApiConfig(env: Record<string, string | undefined>): ApiConfig {
  return parseConfig(apiEnv, env);
}

export function loadApiConfig(): ApiConfig {
  return loadConfigOrExit(() => parseApiConfig(process.env));
}

/** The admin CLI's own settings: where the admin API is and how to authenticate. */
export const adminCliEnv = z.object({
  DATA_DIR: commonEnv.DATA_DIR,
  ADMIN_PORT: envPort.default(8081).describe('Admin API port'),
  ADMIN_URL: z.url().optional().describe('Admin API base URL for `npm run admin`; default http://127.0.0.1:$ADMIN_PORT'),
  ADMIN_TOKEN: z.string().optional().describe('Admin bearer token; unset reads DATA_DIR/admin-token'),
});

export type AdminCliConfig = z.infer<typeof adminCliEnv>;

export function loadAdminCliConfig(): AdminCliConfig {
  return loadConfigOrExit(() => parseConfig(adminCliEnv, process.env));
}

/** The migration Job's settings (`node api/src/db/migrate.ts`, a Helm pre-install/pre-upgrade hook). */
export const migrateEnv = z.object({
  LOG_LEVEL: commonEnv.LOG_LEVEL,
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL').describe('PostgreSQL URL to migrate'),
});

export function loadMigrateConfig(): z.infer<typeof migrateEnv> {
  return loadConfigOrExit(() => parseConfig(migrateEnv, process.env));
}

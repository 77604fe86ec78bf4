/**
 * The api's settings, parsed once at start-up (STYLE §4). Keys are the environment variable names;
 * each `.describe()` text is the README's help column.
 */
import { z } from 'zod';
import { commonEnv, envPort, loadConfigOrExit, parseConfig } from '@uda/shared/config';

const secret = (help: string) => z.string().min(32, 'must be at least 32 characters').optional().describe(help);

export const apiEnv = z
  .object({
    ...commonEnv,
    HOST: z.string().default('0.0.0.0').describe('Address the public API listens on'),
    PORT: envPort.default(3000).describe('Public API port (0 picks a free port)'),
    METRICS_PORT: envPort.default(9091).describe('Port for /healthz, /readyz and /metrics (0 picks a free port)'),
    ADMIN_HOST: z.string().default('127.0.0.1').describe('Address the admin API listens on; keep it private'),
    ADMIN_PORT: envPort.default(3001).describe('Admin API port (0 picks a free port)'),
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
      .default(5_000)
      .describe('How long a pod caches an API key lookup; a revocation or plan change made via another pod applies after at most this'),
    CORS_ORIGINS: z.string().default('*').describe('Comma-separated origins allowed by CORS on public data routes, or *'),
    SHUTDOWN_GRACE_MS: z.coerce
      .number()
      .int()
      .min(0)
      .max(120_000)
      .default(10_000)
      .describe('On SIGTERM: time allowed for in-flight requests to finish'),
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
  ADMIN_PORT: envPort.default(3001).describe('Admin API port'),
  ADMIN_URL: z.url().optional().describe('Admin API base URL for `npm run admin`; default http://127.0.0.1:$ADMIN_PORT'),
  ADMIN_TOKEN: z.string().optional().describe('Admin bearer token; unset reads DATA_DIR/admin-token'),
});

export type AdminCliConfig = z.infer<typeof adminCliEnv>;

export function loadAdminCliConfig(): AdminCliConfig {
  return loadConfigOrExit(() => parseConfig(adminCliEnv, process.env));
}

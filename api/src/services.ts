/**
 * The services the request code receives (STYLE §5). Built once by the composition root
 * (`main.ts`), or by the test harness with its own database, Redis client and key prefix.
 */
import type { Redis } from 'ioredis';
import { type Logger, createLogger } from '@uda/shared/logger';
import { AccountStore } from './accounts/store.ts';
import type { ApiConfig } from './config.ts';
import { type Db, migrate, openDb } from './db/index.ts';
import { KeyCrypto } from './keys/crypto.ts';
import { LocalKeyChanges } from './keys/changes.ts';
import { RedisKeyChanges } from './keys/changes-redis.ts';
import { KeyStore } from './keys/store.ts';
import { MemoryLimiterBackend } from './limiter/memory.ts';
import { RedisLimiterBackend } from './limiter/redis.ts';
import type { LimiterBackend } from './limiter/types.ts';
import { DEFAULT_LIMITS, type Limits } from './limits.ts';
import { Billing, type BillingLoops, type DeliveryTracker, LEASE_TTL_MS, LeaseBook, Ledger, MemoryDeliveryTracker, MemoryWallet, RedisDeliveryTracker, RedisWallet, ResilientDeliveryTracker, startBillingLoops, UsageLog, type Wallet } from './billing/index.ts';
import { Metrics } from './metrics.ts';
import { type Counters, type Guards, buildCounters, buildGuards } from './middleware/guards.ts';
import { resolveSecrets } from './secrets.ts';
import { createObjectStore, objectStoreEnv, type ObjectStore } from '@uda/shared/object-store';
import type { ObjectCache } from './objects/object-cache.ts';
import { CacheWarmer } from './objects/cache-warmer.ts';
import { DownloadCounts } from './objects/download-counts.ts';
import { ObjectCopier } from './objects/object-copier.ts';
import type { LiveDeps } from './live/lookup.ts';
import type { LiveConfig } from './live/setup.ts';
import type { RunnerPool } from './runners/pool.ts';
import { buildLive, buildObjectCache, buildRunnerPool } from './service-adapters.ts';
import { RunnerClient } from './runners/client.ts';
import { Manifests } from './sql/export-version.ts';
import { StoredLookupCache } from './lookups/stored-cache.ts';
import { FairShare } from './fair/fair-share.ts';
import { MemoryFairStore } from './fair/store.ts';
import { signupAddressHasher } from './fair/signup-address.ts';
import { RedisFairStore } from './fair/store-redis.ts';
import { OperatorApprovalPayments } from './session/payments/payments.ts';
import { SigninLimit } from './session/auth/signin-limit.ts';
import { EmailLimit } from './session/auth/email-limit.ts';
import { EmailTokens } from './session/auth/email-tokens.ts';
import { MailQueue, createMailer } from './mail/mailer.ts';
import { SessionStore } from './session/store.ts';

/**
 * How often each pod refunds the charges whose deliveries died with another pod and settles the
 * expired credit leases: a sixth of a lease's life, so an idle account's lease is settled soon after
 * it expires (DECISIONS §3 "One balance"), for one indexed query and one Redis call per pod.
 */
const BILLING_RECONCILE_MS = LEASE_TTL_MS / 6;

export interface Services {
  readonly config: ApiConfig;
  readonly logger: Logger;
  readonly db: Db;
  readonly accounts: AccountStore;
  readonly keys: KeyStore;
  readonly metrics: Metrics;
  readonly billing: Billing;
  /** Billing's reconciler and flush timers; `closeServices` stops them before the drain. */
  readonly billingLoops: BillingLoops;
  readonly ledger: Ledger;
  readonly limiterBackend: LimiterBackend;
  readonly counters: Counters;
  readonly guards: Guards;
  readonly limits: Limits;
  readonly adminToken: string;
  readonly state: { ready: boolean };
  /** Exports, query results and sheets. */
  readonly store: ObjectStore;
  /** The pod's disk cache of the store's immutable objects (export and result files). */
  readonly objectCache: ObjectCache;
  /** Downloads per export file name in this pod: the warm-up's order. */
  readonly downloads: DownloadCounts;
  /** Copies each new export version into `objectCache`; `closeServices` stops it. */
  readonly cacheWarmer: CacheWarmer;
  readonly runnerPool: RunnerPool;
  readonly runners: RunnerClient;
  /** The export manifests, the current one cached for a second (the SQL query id, export routes). */
  readonly manifests: Manifests;
  /** Stored-source lookup answers, cached and coalesced in this process. */
  readonly storedLookups: StoredLookupCache;
  /** The gate of every user-SQL runner call: concurrent queries and the failed-run budget per account. */
  readonly fairShare: FairShare;
  /** The sign-up address as an account keeps it (a peppered hash of `req.ip`). */
  readonly signupAddressOf: (address: string) => string;
  /** Live upstream lookups: clients, etiquette, breakers, stale copies. */
  readonly live: LiveDeps;
  /** The dashboard's sessions and users (DECISIONS §10). */
  readonly sessions: SessionStore;
  /** Failed sign-ins and sign-ups per address and email. */
  readonly signinLimit: SigninLimit;
  /** Upgrade and top-off requests: the dashboard records them, admin decides them. */
  readonly payments: OperatorApprovalPayments;
  /** The single-use tokens of verification and password-reset links. */
  readonly emailTokens: EmailTokens;
  /** Verification and reset emails asked for, per account, email and address. */
  readonly emailLimit: EmailLimit;
  /** Outgoing email, sent in the background: SMTP, or the outbox folder by default. */
  readonly mail: MailQueue;
}

export interface ServiceOverrides {
  logger?: Logger;
  limits?: Limits;
  /** An existing, migrated database (tests share one per file); close with `keepDb`. */
  db?: Db;
  /** An existing Redis client (tests); `closeServices` leaves it open. */
  redis?: Redis;
  /** Live-source settings beyond the environment's (tests shorten etiquette intervals). */
  live?: Partial<LiveConfig>;
  defaultMetrics?: boolean;
}

export async function buildServices(config: ApiConfig, overrides: ServiceOverrides = {}): Promise<Services> {
  const logger = overrides.logger ?? createLogger({ name: 'api', level: config.LOG_LEVEL });
  const limits = overrides.limits ?? DEFAULT_LIMITS;
  const secrets = resolveSecrets(config);
  const db = overrides.db ?? openDb({ databaseUrl: config.DATABASE_URL, poolMax: config.DATABASE_POOL_MAX, dataDir: config.DATA_DIR });
  if (!overrides.db) await migrate(db);
  const metrics = new Metrics({ defaultMetrics: overrides.defaultMetrics });
  const limiterBackend: LimiterBackend =
    overrides.redis || config.REDIS_URL
      ? new RedisLimiterBackend({ url: config.REDIS_URL, client: overrides.redis, prefix: config.REDIS_KEY_PREFIX })
      : new MemoryLimiterBackend();
  const base = { config, logger, db, metrics, limiterBackend };
  const { accounts, keys, keyChanges } = buildAccounts(base, secrets);
  const store = createObjectStore(config);
  const { billing, billingLoops, ledger } = buildBilling(base, accounts, store);
  if (keyChanges instanceof RedisKeyChanges && !(await keyChanges.ready())) logger.warn('Key change subscription not up yet; cached keys are trusted for 1 s meanwhile');
  if (!(await limiterBackend.ready())) logger.warn('Redis not reachable yet; rate limits use the in-process insurance limiter meanwhile');
  const counters = buildCounters(limiterBackend, limits);
  const guards = buildGuards({ backend: limiterBackend, counters, limits, metrics, billing });
  const sql = await buildSql(base, { accounts, limits, runnerToken: secrets.runnerToken });
  const live = buildLive(config, db, limiterBackend, { logger, metrics }, overrides.live);
  metrics.insuranceActive = () => limiterBackend instanceof RedisLimiterBackend && limiterBackend.client.status !== 'ready';
  metrics.openCircuits = () => Object.fromEntries(Object.entries(live.breakers.states()).map(([source, state]) => [source, state === 'open']));
  const objects = await buildObjects(base, store);
  return {
    ...base,
    accounts,
    keys,
    billing,
    billingLoops,
    ledger,
    counters,
    guards,
    limits,
    adminToken: secrets.adminToken,
    state: { ready: true },
    store,
    ...objects,
    ...sql,
    signupAddressOf: signupAddressHasher(secrets.pepper),
    live,
    ...buildSessions(base, accounts),
  };
}

/** What every part is built from. */
interface Base {
  readonly config: ApiConfig;
  readonly logger: Logger;
  readonly db: Db;
  readonly metrics: Metrics;
  readonly limiterBackend: LimiterBackend;
}

/** Redis when the limiter has it, else this process: key changes announced to every pod. */
function buildAccounts({ config, logger, db, limiterBackend }: Base, secrets: ReturnType<typeof resolveSecrets>) {
  const keyChanges =
    limiterBackend instanceof RedisLimiterBackend
      ? new RedisKeyChanges({ redis: limiterBackend.client, prefix: config.REDIS_KEY_PREFIX, logger })
      : new LocalKeyChanges();
  const accounts = new AccountStore(db, undefined, (accountId) => keyChanges.announce(accountId));
  const keys = new KeyStore(db, new KeyCrypto({ pepper: secrets.pepper, encryptionKeyHex: secrets.encryptionKeyHex }), {
    cache: { ttlMs: config.KEY_CACHE_TTL_MS, size: config.KEY_CACHE_SIZE },
    changes: keyChanges,
  });
  return { accounts, keys, keyChanges };
}

/** The ledger, the wallet and the delivery tracker (in Redis when the limiter has it), the usage log, and billing's loops. */
function buildBilling({ config, logger, db, metrics, limiterBackend }: Base, accounts: AccountStore, store: ObjectStore) {
  const redis = limiterBackend instanceof RedisLimiterBackend ? limiterBackend.client : undefined;
  const deliveries: DeliveryTracker = redis
    ? new ResilientDeliveryTracker(new RedisDeliveryTracker({ redis, prefix: config.REDIS_KEY_PREFIX }), (err) =>
        logger.warn({ err }, 'Redis unavailable: deliveries tracked in this process meanwhile'),
      )
    : new MemoryDeliveryTracker();
  const ledger = new Ledger(db, accounts);
  const wallet: Wallet = redis ? new RedisWallet({ redis, prefix: config.REDIS_KEY_PREFIX }) : new MemoryWallet();
  const usage = new UsageLog({ store, db, retentionDays: config.USAGE_LOG_RETENTION_DAYS });
  const billing = new Billing({ ledger, leases: new LeaseBook(db), wallet, deliveries, metrics, logger, usage });
  accounts.onBalanceChange(async (accountId) => {
    await billing.refreshBuckets(accountId).catch((err: unknown) => logger.warn({ err }, 'cached balance not refreshed'));
  });
  const billingLoops = startBillingLoops(billing, BILLING_RECONCILE_MS);
  return { billing, billingLoops, ledger };
}

/** The pod's disk cache of the store's export and result files, and the warm-up that fills it. */
async function buildObjects({ config, logger, metrics }: Base, store: ObjectStore) {
  const objectCache = await buildObjectCache(config, metrics, logger);
  metrics.objectCacheBytes = () => objectCache.heldBytes;
  const manifests = new Manifests(store);
  const downloads = new DownloadCounts();
  const cacheWarmer = new CacheWarmer({
    cache: objectCache,
    store,
    manifests,
    downloads,
    // The store settings only, not the rest of the config (secrets), go to the worker thread.
    copier: new ObjectCopier(Object.fromEntries([...Object.keys(objectStoreEnv), 'DATA_DIR'].map((key) => [key, config[key as keyof ApiConfig]]))),
    concurrency: config.OBJECT_CACHE_WARM_CONCURRENCY,
    pollMs: config.OBJECT_CACHE_WARM_POLL_MS,
    metrics,
    onError: (err, what) => logger.warn({ err }, what),
  });
  cacheWarmer.start();
  return { objectCache, manifests, downloads, cacheWarmer };
}

/** The runners and what gates them: the pool, the client, the stored lookups and the fair share per account. */
async function buildSql({ config, logger, limiterBackend }: Base, { accounts, limits, runnerToken }: { accounts: AccountStore; limits: Limits; runnerToken: string }) {
  const runnerPool = await buildRunnerPool(config, logger);
  const runners = new RunnerClient({ pool: runnerPool, requestTimeoutMs: config.QUERY_RUNNER_TIMEOUT_MS, token: runnerToken });
  const fairShare = new FairShare({
    store:
      limiterBackend instanceof RedisLimiterBackend
        ? new RedisFairStore({ redis: limiterBackend.client, prefix: config.REDIS_KEY_PREFIX, onError: (err) => logger.warn({ err }, 'fair shares counted in this process meanwhile') })
        : new MemoryFairStore(),
    limits: limits.fairShare,
    callTimeoutMs: config.QUERY_RUNNER_TIMEOUT_MS,
    signupAddressOf: (accountId) => accounts.signupAddress(accountId),
  });
  return { runnerPool, runners, storedLookups: new StoredLookupCache(runners), fairShare };
}

/** The dashboard's sessions, sign-in and email limits, payment requests and outgoing email. */
function buildSessions({ config, logger, db, limiterBackend }: Base, accounts: AccountStore) {
  return {
    sessions: new SessionStore(db),
    signinLimit: new SigninLimit(limiterBackend),
    payments: new OperatorApprovalPayments(db, accounts),
    emailTokens: new EmailTokens(db),
    emailLimit: new EmailLimit(limiterBackend),
    mail: new MailQueue(createMailer(config, logger), logger),
  };
}

export async function closeServices(services: Services, options: { keepDb?: boolean } = {}): Promise<void> {
  // Cancels the warm-up's copies; their temporary files are removed before the process ends.
  await services.cacheWarmer.stop();
  // Refunds of deliveries cut by the shutdown, pending lookups and in-process leases are written before the database closes.
  services.billingLoops.stop();
  await services.billing.drain();
  await services.runnerPool.close();
  // Writes the last batch of last_used_at before the database closes.
  await services.keys.close();
  // Emails already on their way are sent (their tokens are stored) before the process ends.
  await services.mail.close();
  await services.limiterBackend.close();
  if (!options.keepDb) await services.db.destroy();
}

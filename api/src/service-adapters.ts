/**
 * Which implementation each adapter of the services gets, from the configuration: the runner pool
 * (Kubernetes or a static list), the object cache (S3 only), the live sources' etiquette (Redis or
 * this process). Part of the composition root (`services.ts`).
 */
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from '@uda/shared/logger';
import type { ApiConfig } from './config.ts';
import type { Db } from './db/index.ts';
import { RedisLimiterBackend } from './limiter/redis.ts';
import type { LimiterBackend } from './limiter/types.ts';
import { KnexStaleCopyStore } from './live/copies.ts';
import { DEFAULT_ETIQUETTE } from './live/etiquette.ts';
import { MemoryEtiquette } from './live/etiquette-memory.ts';
import { RedisEtiquette } from './live/etiquette-redis.ts';
import type { LiveDeps } from './live/lookup.ts';
import { createLiveDeps, DEFAULT_LIVE_CONFIG, type LiveConfig } from './live/setup.ts';
import type { Metrics } from './metrics.ts';
import { ObjectCache } from './objects/object-cache.ts';
import { KubernetesRunnerPool } from './runners/k8s-pool.ts';
import { StaticRunnerPool, type RunnerPool } from './runners/pool.ts';

/** Kubernetes: the runner Service's EndpointSlices; elsewhere the static list (DECISIONS §6 routing). */
export async function buildRunnerPool(config: ApiConfig, logger: Logger): Promise<RunnerPool> {
  if (!config.QUERY_RUNNER_SERVICE) {
    return new StaticRunnerPool(config.QUERY_RUNNER_URLS.split(',').map((u) => u.trim()).filter(Boolean));
  }
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromCluster();
  return KubernetesRunnerPool.start({
    kubeConfig,
    namespace: config.POD_NAMESPACE,
    serviceName: config.QUERY_RUNNER_SERVICE,
    portName: config.QUERY_RUNNER_PORT_NAME,
    logger,
  });
}

/** With S3 only: a local folder store is already a local file. */
export function buildObjectCache(config: ApiConfig, metrics: Metrics, logger: Logger): Promise<ObjectCache> {
  return ObjectCache.open({
    dir: config.OBJECT_CACHE_DIR ?? join(config.DATA_DIR, 'object-cache'),
    maxBytes: config.S3_BUCKET ? config.OBJECT_CACHE_MAX_MB * 1024 * 1024 : 0,
    metrics,
    onError: (err, what) => logger.warn({ err }, what),
  });
}

export function buildLive(config: ApiConfig, db: Db, limiter: LimiterBackend, { logger, metrics }: { logger: Logger; metrics: Metrics }, extra: Partial<LiveConfig> = {}): LiveDeps {
  const onError = (error: unknown) => logger.warn({ err: error }, 'live lookup background failure');
  const etiquette =
    limiter instanceof RedisLimiterBackend
      ? new RedisEtiquette({ redis: limiter.client, prefix: config.REDIS_KEY_PREFIX, rules: DEFAULT_ETIQUETTE, onError })
      : new MemoryEtiquette({ rules: DEFAULT_ETIQUETTE });
  const liveConfig: LiveConfig = {
    ...DEFAULT_LIVE_CONFIG,
    contactEmail: config.UPSTREAM_CONTACT_EMAIL,
    timeoutMs: config.UPSTREAM_TIMEOUT_MS,
    wikipediaBaseUrl: config.WIKIPEDIA_BASE_URL,
    wikipediaRestBaseUrl: config.WIKIPEDIA_REST_BASE_URL,
    arxivBaseUrl: config.ARXIV_BASE_URL,
    stackexchangeBaseUrl: config.STACKEXCHANGE_BASE_URL,
    stackexchangeKey: config.STACKEXCHANGE_KEY,
    pypiBaseUrl: config.PYPI_BASE_URL,
    openalexBaseUrl: config.OPENALEX_BASE_URL,
    openalexApiKey: config.OPENALEX_API_KEY,
    ...extra,
  };
  const observeUpstream = (source: string, seconds: number) => metrics.upstreamDuration.observe({ source }, seconds);
  return createLiveDeps({ config: liveConfig, etiquette, copies: new KnexStaleCopyStore(db), onBackgroundError: onError, observeUpstream });
}

/**
 * Builds a runner's services once (STYLE §5) and starts its HTTP servers. `main.ts` calls this
 * with the parsed config; tests call it too, so they run the same composition.
 */
import { once } from 'node:events';
import { mkdir, rm } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import express from 'express';
import type { Logger } from '@uda/shared/logger';
import { type ObjectStore, createObjectStore } from '@uda/shared/object-store';
import { createSqlParser } from '@uda/shared/sql';
import type { RunnerConfig } from './config.ts';
import { createMemoryCoordination } from './coordination-memory.ts';
import { createRedisCoordination } from './coordination-redis.ts';
import { DatabaseManager } from './database-manager.ts';
import { type AppDeps, createApp, metricsHandler } from './http/routes.ts';
import { createLimiter } from './limiter.ts';
import { createRankPool, type RankPool } from './lookups/rank-pool.ts';
import { runLookup } from './lookups/run-lookup.ts';
import { createPageCache } from './lookups/page-cache.ts';
import { openSearchIndexes } from './lookups/search-index.ts';
import { type SearchableSheet, searchSheet } from './sheets/search.ts';
import { createSheetCache } from './sheets/sheet-cache.ts';
import { RUNNER_TOKEN_FILE } from '@uda/shared/runner-contract';
import { readOrCreateSecret } from '@uda/shared/secrets';
import { type RunnerMetrics as Metrics, createMetrics, setDataVersion } from './metrics.ts';
import { QueryService } from './query-service.ts';
import { ResultStore } from './result-store.ts';
import { createResultWriter } from './result-writer.ts';
import { createQueryPool } from './workers/pool.ts';
import { createWorkDir, removeStaleWorkDirs } from './work-dirs.ts';
import type { QueryPool } from './workers/pool.ts';

/** How often a busy worker's memory is read: at ~200 MB/s of growth, a 100 ms poll overshoots by ~20 MB. */
const RSS_POLL_MS = 100;

export interface StartedRunner {
  readonly url: string;
  readonly metricsUrl: string;
  readonly databases: DatabaseManager;
  readonly pool: QueryPool;
  /** The ranking threads of stored lookups; absent with RANK_THREADS=0. */
  readonly ranker: RankPool | undefined;
  /** Stops accepting, lets running queries finish for `graceMs`, interrupts the rest, closes all. */
  shutdown(graceMs: number): Promise<void>;
}

export async function startRunner(config: RunnerConfig, logger: Logger): Promise<StartedRunner> {
  const { workDir, scratchDir } = await prepareWorkDir(config, logger);
  const store = createObjectStore(config);
  const metrics = createMetrics();
  const { databases, sandboxLimits } = openDatabases(config, store, workDir, metrics, logger);
  const coordination = config.REDIS_URL
    ? createRedisCoordination(config.REDIS_URL, config.REDIS_KEY_PREFIX, (error) => logger.warn({ err: error }, 'redis error'))
    : createMemoryCoordination();
  const writer = await createResultWriter();
  const parser = await createSqlParser();
  const { limiter, ownWork, ranker } = createCapacity(config, metrics);
  const stopping = new AbortController();
  const limits = {
    maxRows: config.QUERY_MAX_ROWS, timeoutMs: config.QUERY_TIMEOUT_MS, maxBytes: config.QUERY_MAX_RESULT_BYTES, maxCellBytes: config.QUERY_MAX_CELL_BYTES,
  };
  const results = new ResultStore({ store, writer, scratchDir, maxBytes: limits.maxBytes });
  const pool = createQueryPool({
    size: config.QUERY_WORKERS, sandboxLimits, maxRssBytes: config.QUERY_WORKER_MAX_RSS_MB * 1024 * 1024,
    killGraceMs: config.QUERY_KILL_GRACE_MS, rssPollMs: RSS_POLL_MS, logger,
    onKill: () => metrics.workerKills.inc(),
  });
  const service = new QueryService({
    store, results, pool, limits, scratchDir, parser, coordination, databases, limiter, metrics, logger,
    resultTtlMs: config.RESULT_TTL_SECONDS * 1000, lockTtlMs: config.QUERY_LOCK_TTL_MS, queueWaitMs: config.QUERY_QUEUE_WAIT_MS, shutdown: stopping.signal,
  });
  const lookupCache = createPageCache(config.LOOKUP_CACHE_BYTES);
  const sheetCache = createSheetCache<SearchableSheet>(config.SHEET_SEARCH_CACHE_BYTES);
  const work: RunnerWork = {
    service, metrics, logger, ready: () => databases.ready,
    lookup: (request) => runLookup({ databases, limiter: ownWork, timeoutMs: limits.timeoutMs, ranker, cache: lookupCache }, request),
    sheetSearch: (request) =>
      searchSheet({ store, databases, limiter: ownWork, sandboxLimits, scratchDir, timeoutMs: limits.timeoutMs, cache: sheetCache }, request),
  };
  const http = await serveHttp(config, work);
  databases.start();
  logger.info({ url: http.url, store: store.description, coordination: coordination.description }, 'query runner listening');

  return {
    url: http.url,
    metricsUrl: http.metricsUrl,
    databases,
    pool,
    ranker,
    async shutdown(graceMs) {
      const idle = () => limiter.running === 0 && limiter.queued === 0 && ownWork.running === 0 && ownWork.queued === 0;
      await http.drain(idle, graceMs, stopping);
      await pool.close();
      await databases.stop();
      sheetCache.clear();
      await ranker?.close();
      await coordination.close();
      parser.close();
      writer.close();
      await rm(workDir, { recursive: true, force: true });
    },
  };
}

/**
 * A private folder per process: two runners may share DATA_DIR; the folders of runners that died
 * without cleaning up (SIGKILL) are removed here.
 */
async function prepareWorkDir(config: RunnerConfig, logger: Logger) {
  await mkdir(resolve(config.DATA_DIR), { recursive: true });
  const stale = await removeStaleWorkDirs(resolve(config.DATA_DIR));
  if (stale.length > 0) logger.info({ folders: stale }, 'removed working folders of runners that are gone');
  const workDir = await createWorkDir(resolve(config.DATA_DIR));
  const scratchDir = join(workDir, 'scratch');
  await mkdir(scratchDir, { recursive: true });
  return { workDir, scratchDir };
}

/** The data versions, each prepared with its search indexes before it is served. */
function openDatabases(config: RunnerConfig, store: ObjectStore, workDir: string, metrics: Metrics, logger: Logger) {
  const sandboxLimits = {
    memoryLimit: config.DUCKDB_MEMORY_LIMIT,
    threads: config.DUCKDB_THREADS,
    maxTempSize: config.DUCKDB_MAX_TEMP_SIZE,
    tempDirectory: join(workDir, 'duckdb-tmp'),
  };
  const databases = new DatabaseManager({
    store, dir: join(workDir, 'db'), limits: sandboxLimits, pollMs: config.MANIFEST_POLL_MS, logger,
    onVersion: (version) => setDataVersion(metrics, version),
    prepare: async (database) => {
      const started = performance.now();
      const indexes = await openSearchIndexes(database, sandboxLimits);
      const seconds = Number(((performance.now() - started) / 1000).toFixed(1));
      logger.info({ version: database.version, origin: indexes.origin, seconds, sources: indexes.describe(), rssMegabytes: Math.round(process.memoryUsage().rss / 1e6) }, 'search index loaded');
    },
  });
  return { databases, sandboxLimits };
}

/** User SQL's slots, our own work's slots (lookups, sheet search) and the ranking threads. */
function createCapacity(config: RunnerConfig, metrics: Metrics) {
  const limiter = createLimiter(config.MAX_CONCURRENT_QUERIES, config.MAX_QUEUED_QUERIES, {
    classes: true,
    onChange: () => {
      metrics.running.set(limiter.running);
      metrics.queued.set(limiter.queued);
    },
  });
  const rankThreads = config.RANK_THREADS ?? availableParallelism();
  // Our own work (lookups, sheet search) has capacity of its own: user SQL never takes it (DECISIONS §4).
  // At least two lookups per ranking thread run at once, so a thread has the next one while the main
  // thread reads the last one's page: fewer would leave cores idle.
  const lookupSlots = Math.max(config.MAX_CONCURRENT_LOOKUPS, 2 * rankThreads);
  const ownWork = createLimiter(lookupSlots, config.MAX_QUEUED_LOOKUPS);
  // Its queue holds at most the lookups the limiter lets run; the bound is a guard.
  const ranker = rankThreads > 0 ? createRankPool(rankThreads, lookupSlots) : undefined;
  return { limiter, ownWork, ranker };
}

/** What the HTTP routes serve; the server adds whether it still accepts work, and the token. */
type RunnerWork = Omit<AppDeps, 'accepting' | 'serveMetrics' | 'token'>;

/** The runner's HTTP server (and the metrics one, when on a port of its own). */
async function serveHttp(config: RunnerConfig, work: RunnerWork) {
  let accepting = true;
  const separateMetrics = config.RUNNER_METRICS_PORT !== undefined;
  const app = createApp({
    ...work, accepting: () => accepting, serveMetrics: !separateMetrics,
    // Unset: the file the embedded API reads too (the chart always sets it from its Secret).
    token: config.RUNNER_TOKEN ?? readOrCreateSecret(resolve(config.DATA_DIR), RUNNER_TOKEN_FILE),
  });
  const server = await listen(app, config.RUNNER_PORT, config.RUNNER_HOST);
  const metricsServer = separateMetrics
    ? await listen(express().get('/metrics', metricsHandler(work.metrics)), config.RUNNER_METRICS_PORT ?? 0, config.RUNNER_HOST)
    : undefined;
  return {
    url: urlOf(server, config.RUNNER_HOST),
    metricsUrl: `${urlOf(metricsServer ?? server, config.RUNNER_HOST)}/metrics`,
    /** Stops accepting, lets running work finish for `graceMs`, interrupts the rest (`stopping`), closes the servers. */
    async drain(idle: () => boolean, graceMs: number, stopping: AbortController) {
      accepting = false;
      const closed = close(server);
      await waitUntil(idle, graceMs);
      stopping.abort();
      await waitUntil(idle, 5_000);
      await closed;
      if (metricsServer) await close(metricsServer);
    },
  };
}

async function listen(app: express.Express, port: number, host: string): Promise<Server> {
  const server = app.listen(port, host);
  await once(server, 'listening');
  return server;
}

function close(server: Server): Promise<void> {
  return new Promise((done) => {
    server.close(() => done());
    server.closeIdleConnections();
  });
}

function urlOf(server: Server, host: string): string {
  const { port } = server.address() as AddressInfo;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

async function waitUntil(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
}

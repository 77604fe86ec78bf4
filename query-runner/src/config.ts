/**
 * The runner's settings, read once from the environment (STYLE §4). Keys are the variable names;
 * each `.describe()` feeds the README's configuration table.
 */
import { z } from 'zod';
import { commonEnv, envPort, loadConfigOrExit, parseConfig } from '@uda/shared/config';
import { objectStoreEnv } from '@uda/shared/object-store';
import { RUNNER_LIMIT_DEFAULTS } from '@uda/shared/runner-contract';

const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
/** An empty variable means unset (the embedded start script passes `RUNNER_METRICS_PORT=`). */
const optional = <T extends z.ZodType>(type: T) => z.preprocess((v) => (v === '' ? undefined : v), type.optional());

export const runnerConfigSchema = z.object({
  ...commonEnv,
  ...objectStoreEnv,
  RUNNER_HOST: z.string().default('127.0.0.1').describe('Interface the internal HTTP API listens on'),
  RUNNER_PORT: envPort.default(8090).describe('Port of the internal HTTP API (0 picks a free port)'),
  RUNNER_METRICS_PORT: optional(envPort).describe('Separate port for /metrics; unset serves /metrics on RUNNER_PORT'),
  RUNNER_TOKEN: optional(z.string().min(32, 'must be at least 32 characters')).describe(
    'Bearer token every caller of the runner API must send (the API\'s QUERY_RUNNER_TOKEN; a Secret in the chart); unset reads or generates DATA_DIR/runner-token',
  ),
  REDIS_URL: optional(z.url()).describe('Redis for per-query locks and the result index; unset uses in-process stores (one runner only)'),
  REDIS_KEY_PREFIX: z.string().default('uda:runner:').describe('Prefix of every Redis key the runner writes'),
  QUERY_TIMEOUT_MS: int(100, 300_000).default(RUNNER_LIMIT_DEFAULTS.queryTimeoutMs).describe('Execution time limit per query (SPEC: 30 s)'),
  QUERY_MAX_ROWS: int(1, 100_000).default(RUNNER_LIMIT_DEFAULTS.maxRows).describe('Rows returned per query; more are cut (SPEC: 1,000)'),
  QUERY_MAX_RESULT_BYTES: int(1024, 1024 ** 3)
    .default(RUNNER_LIMIT_DEFAULTS.maxResultBytes)
    .describe('Result size limit in any format (SPEC: 64 MB)'),
  QUERY_MAX_CELL_BYTES: int(1024, 64 * 1024 * 1024)
    .default(32 * 1024)
    .describe('Largest single value (string, blob, list, map) in a result, as JSON; a list also holds at most QUERY_MAX_ROWS elements'),
  QUERY_LOCK_TTL_MS: int(100, 600_000)
    .default(45_000)
    .describe('Per-query lock lifetime; longer than QUERY_TIMEOUT_MS so a dead runner frees it'),
  RESULT_TTL_SECONDS: int(1, 86_400).default(RUNNER_LIMIT_DEFAULTS.resultTtlSeconds).describe('Uncharged re-read window of a stored result (DECISIONS §6)'),
  MAX_CONCURRENT_QUERIES: int(1, 256).default(8).describe('Queries executed at once; more wait in a queue'),
  QUERY_WORKERS: int(1, 64).default(4).describe('Worker processes that execute user SQL; more queries wait for a free one'),
  QUERY_WORKER_MAX_RSS_MB: int(64, 1024 * 1024)
    .default(2048)
    .describe('A query worker whose resident memory passes this is killed and its query refused (keep above DUCKDB_MEMORY_LIMIT)'),
  QUERY_KILL_GRACE_MS: int(0, 60_000)
    .default(2_000)
    .describe('After QUERY_TIMEOUT_MS, how long a worker may take to stop before it is killed (408)'),
  MAX_QUEUED_QUERIES: int(0, 10_000).default(64).describe('Queries waiting for a slot before QUERY_BACKEND_UNAVAILABLE (Retry-After 1)'),
  QUERY_QUEUE_WAIT_MS: int(0, 300_000)
    .default(5_000)
    .describe('How long a query may wait for a slot and a worker before QUERY_BACKEND_UNAVAILABLE (Retry-After 1); keeps a refusal prompt under load'),
  MAX_CONCURRENT_LOOKUPS: int(1, 256)
    .default(4)
    .describe('Lookups and sheet searches run at once, on capacity of their own that user SQL cannot take (DECISIONS §4 Fair shares)'),
  MAX_QUEUED_LOOKUPS: int(0, 10_000).default(256).describe('Lookups and sheet searches waiting for their capacity before QUERY_BACKEND_UNAVAILABLE (Retry-After 1)'),
  LOOKUP_CACHE_BYTES: int(0, 1 << 30)
    .default(64 << 20)
    .describe('Bytes of stored-lookup response bodies kept per runner, per (data version, source, limit, terms); 0: every lookup is ranked'),
  SHEET_SEARCH_CACHE_BYTES: int(0, 1 << 30)
    .default(256 << 20)
    .describe('Bytes of connected-sheet versions kept open for search per runner (their engine memory and term dictionary); 0: every search opens its sheet'),
  RANK_THREADS: optional(int(0, 256)).describe(
    'Threads ranking stored lookups over the shared in-memory index; unset: the cores given (os.availableParallelism()); 0: on the main thread',
  ),
  DUCKDB_MEMORY_LIMIT: z.string().default('1GB').describe('DuckDB memory_limit of the sandbox'),
  DUCKDB_THREADS: int(1, 256).default(2).describe('DuckDB threads of the sandbox'),
  DUCKDB_MAX_TEMP_SIZE: z.string().default('2GB').describe('DuckDB max_temp_directory_size of the sandbox'),
  MANIFEST_POLL_MS: int(50, 3_600_000).default(15_000).describe('How often the export manifest is checked for a new database'),
  SHUTDOWN_GRACE_MS: int(0, 600_000)
    .default(25_000)
    .describe('On SIGTERM, how long running queries may finish before they are interrupted'),
});

export type RunnerConfig = z.infer<typeof runnerConfigSchema>;

export function loadRunnerConfig(env: Record<string, string | undefined> = process.env): RunnerConfig {
  return loadConfigOrExit(() => parseConfig(runnerConfigSchema, env));
}

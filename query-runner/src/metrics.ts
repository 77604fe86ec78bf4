/** Prometheus metrics of one runner. */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export type RunnerMetrics = ReturnType<typeof createMetrics>;

export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const counter = (name: string, help: string, labelNames: string[] = []) =>
    new Counter({ name, help, labelNames, registers: [registry] });
  return {
    registry,
    duration: new Histogram({
      name: 'uda_query_duration_seconds',
      help: 'Query handling time by outcome (ok, cached, or the error code)',
      labelNames: ['outcome'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [registry],
    }),
    running: new Gauge({ name: 'uda_queries_running', help: 'Queries executing now', registers: [registry] }),
    queued: new Gauge({ name: 'uda_queries_queued', help: 'Queries waiting for an execution slot', registers: [registry] }),
    executions: counter('uda_query_executions_total', 'Queries executed on DuckDB (cache misses that ran)'),
    timeouts: counter('uda_query_timeouts_total', 'Queries stopped at the time limit'),
    busy: counter('uda_query_busy_total', 'QUERY_BUSY answers (the query is locked by a run still in progress)'),
    tooLarge: counter('uda_query_too_large_total', 'Results refused for exceeding the size limit'),
    sandboxRefusals: counter('uda_sandbox_refusals_total', 'Queries the DuckDB sandbox refused (files, settings, writes)'),
    validatorRefusals: counter('uda_validator_refusals_total', 'Queries the SQL validator refused', ['reason']),
    workerKills: counter('uda_query_worker_kills_total', 'Query workers killed at the hard deadline, the memory ceiling or shutdown'),
    cacheHits: counter('uda_result_cache_hits_total', 'Requests served from a stored result'),
    dataVersion: new Gauge({
      name: 'uda_data_version_info',
      help: 'The export version of the open database (value 1 on the current version label)',
      labelNames: ['version'],
      registers: [registry],
    }),
  };
}

export function setDataVersion(metrics: RunnerMetrics, version: string): void {
  metrics.dataVersion.reset();
  metrics.dataVersion.set({ version }, 1);
}

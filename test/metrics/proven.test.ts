/**
 * Every metric a service registers is proven by a test that drives the traffic that moves it and
 * asserts the change (value and labels). A metric added without such a test fails here, and so does
 * an entry whose test file is gone or no longer mentions the metric. This is how five contract
 * metrics that nothing incremented went unnoticed: a scrape only showed that the names existed.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { Metrics } from '@uda/api/metrics';
import { outcomeRegistry } from '@uda/exporter/metrics';
import { createMetrics } from '@uda/query-runner/metrics';

const repo = resolve(import.meta.dirname, '..', '..');

/** Metric name → the test file (from the repository root) that moves it and asserts the change. */
const PROVEN: Readonly<Record<string, string>> = {
  // api
  uda_http_request_duration_seconds: 'api/src/lookups/lookups.metrics.test.ts',
  uda_lookups_total: 'api/src/lookups/lookups.metrics.test.ts',
  uda_upstream_request_duration_seconds: 'api/src/lookups/lookups.metrics.test.ts',
  uda_upstream_circuit_open: 'api/src/lookups/lookups.metrics.test.ts',
  uda_query_backend_unavailable_total: 'api/src/lookups/lookups.metrics.test.ts',
  uda_mcp_tool_calls_total: 'api/src/mcp/mcp.metrics.test.ts',
  uda_export_bytes_streamed_total: 'api/src/exports/exports.metrics.test.ts',
  uda_object_cache_lookups_total: 'api/src/exports/exports.metrics.test.ts',
  uda_object_cache_bytes: 'api/src/exports/exports.metrics.test.ts',
  uda_refunds_total: 'api/src/exports/exports.metrics.test.ts',
  uda_object_cache_evictions_total: 'api/src/objects/object-cache.test.ts',
  uda_object_cache_warmed_total: 'api/src/exports/exports.warm.test.ts',
  uda_object_cache_warmed_bytes_total: 'api/src/exports/exports.warm.test.ts',
  uda_credits_charged_micro_usd_total: 'api/src/exports/exports.200.test.ts',
  uda_rate_limit_rejections_total: 'api/src/lookups/lookups.metrics.test.ts',
  uda_insurance_limiter_active: 'api/src/limiter/insurance.metrics.test.ts',
  // query-runner
  uda_query_duration_seconds: 'query-runner/src/http/metrics.test.ts',
  uda_query_executions_total: 'query-runner/src/http/metrics.test.ts',
  uda_result_cache_hits_total: 'query-runner/src/http/metrics.test.ts',
  uda_validator_refusals_total: 'query-runner/src/http/metrics.test.ts',
  uda_sandbox_refusals_total: 'query-runner/src/http/metrics.test.ts',
  uda_query_too_large_total: 'query-runner/src/http/metrics.test.ts',
  uda_query_busy_total: 'query-runner/src/http/metrics.test.ts',
  uda_query_timeouts_total: 'query-runner/src/http/metrics.test.ts',
  uda_queries_running: 'query-runner/src/http/metrics.test.ts',
  uda_queries_queued: 'query-runner/src/http/metrics.test.ts',
  uda_query_worker_kills_total: 'query-runner/src/workers/runaway.test.ts',
  uda_data_version_info: 'query-runner/src/http/queries.test.ts',
  // exporter (pushed to the Pushgateway)
  uda_exporter_last_success_timestamp_seconds: 'exporter/src/main.test.ts',
  uda_exporter_last_failure_timestamp_seconds: 'exporter/src/main.test.ts',
  uda_exporter_duration_seconds: 'exporter/src/main.test.ts',
  uda_exporter_rows: 'exporter/src/main.test.ts',
};

function names(registry: Registry): string[] {
  return registry.getMetricsAsArray().map((metric) => metric.name);
}

/**
 * prom-client's default process metrics are prom-client's to prove; the scrape test
 * (scripts/k8s/scrape-services.test.ts) sees them on the running services. Only those are left out.
 */
function defaultMetricNames(): Set<string> {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return new Set(names(registry));
}

function registered(): { registry: string; name: string }[] {
  const defaults = defaultMetricNames();
  const exporter = [...names(outcomeRegistry({ ok: true, finishedAt: new Date(), durationSeconds: 1, rows: { t: 1 } })), ...names(outcomeRegistry({ ok: false, finishedAt: new Date(), durationSeconds: 1 }))];
  const all = [
    ...names(new Metrics({ defaultMetrics: false }).registry).map((name) => ({ registry: 'api', name })),
    ...names(createMetrics().registry).map((name) => ({ registry: 'query-runner', name })),
    ...[...new Set(exporter)].map((name) => ({ registry: 'exporter', name })),
  ];
  return all.filter(({ name }) => !defaults.has(name));
}

describe('every registered metric is proven by traffic', () => {
  const metrics = registered();

  it('lists the metrics of the api, the query-runner and the exporter', () => {
    expect(new Set(metrics.map((m) => m.registry))).toEqual(new Set(['api', 'query-runner', 'exporter']));
    expect(metrics.length).toBeGreaterThan(20);
  });

  it('names a proving test for each registered metric', () => {
    expect(metrics.filter(({ name }) => !PROVEN[name]).map(({ registry, name }) => `${registry}: ${name}`)).toEqual([]);
  });

  it('keeps no entry for a metric that is no longer registered', () => {
    const current = new Set(metrics.map((m) => m.name));
    expect(Object.keys(PROVEN).filter((name) => !current.has(name))).toEqual([]);
  });

  it('each proving test exists and mentions its metric', () => {
    const missing = Object.entries(PROVEN).filter(([name, file]) => {
      const path = join(repo, file);
      return !existsSync(path) || !readFileSync(path, 'utf8').includes(name);
    });
    expect(missing).toEqual([]);
  });
});

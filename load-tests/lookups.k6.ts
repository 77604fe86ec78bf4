/**
 * k6 load test of the public API: data lookups, SQL queries and export downloads in one mix, with
 * thresholds that mirror the SLOs of docs/deploy.md ("SLOs"). k6 cannot run in this repository's
 * CI (see README.md); the file is type-checked with @types/k6 so it stays runnable.
 *
 *   k6 run -e BASE_URL=https://api.example.com -e API_KEY=service_… load-tests/lookups.k6.ts
 *
 * k6 ≥ 0.57 runs TypeScript directly.
 */
import http from 'k6/http';
import { check, group, sleep } from 'k6';
import { Counter, Trend } from 'k6/metrics';
import type { Options } from 'k6/options';

const baseUrl = (__ENV.BASE_URL ?? 'http://127.0.0.1:8080').replace(/\/$/, '');
const apiKey = __ENV.API_KEY ?? '';
const authHeaders: Record<string, string> = apiKey ? { Authorization: `Bearer ${apiKey}` } : {};

const busy = new Counter('uda_query_busy');
const exportBytes = new Counter('uda_export_bytes');
const lookupLatency = new Trend('uda_lookup_latency', true);

export const options: Options = {
  scenarios: {
    lookups: {
      executor: 'ramping-arrival-rate',
      exec: 'lookups',
      startRate: 5,
      timeUnit: '1s',
      preAllocatedVUs: 20,
      maxVUs: 200,
      stages: [
        { target: 50, duration: '1m' },
        { target: 50, duration: '3m' },
        { target: 0, duration: '30s' },
      ],
    },
    sql: {
      executor: 'constant-arrival-rate',
      exec: 'sql',
      rate: 5,
      timeUnit: '1s',
      duration: '4m',
      preAllocatedVUs: 10,
      maxVUs: 50,
    },
    exports: {
      executor: 'constant-vus',
      exec: 'exports',
      vus: 2,
      duration: '4m',
    },
  },
  thresholds: {
    // Availability SLO: 99.9% non-5xx (4xx such as 404 "no results" are expected answers).
    'http_req_failed{kind:lookup}': ['rate<0.001'],
    // Latency SLO: p99 < 1 s for lookups; SQL is bounded by the 30 s query limit.
    uda_lookup_latency: ['p(99)<1000'],
    'http_req_duration{kind:sql}': ['p(95)<5000', 'p(99)<30000'],
    checks: ['rate>0.99'],
  },
};

const words = ['duckdb', 'kubernetes', 'prometheus', 'parquet', 'graph neural network', 'rust', 'climate'];
const sources = ['wiki', 'arxiv', 'stackexchange', 'pypi', 'openalex'];
const pick = <T>(list: readonly T[]): T => list[Math.floor(Math.random() * list.length)]!;

// 4xx answers (404 no results, 429 limits) are valid responses, not failures of the service.
const expectedStatuses = http.expectedStatuses({ min: 200, max: 499 });

export function lookups(): void {
  const source = pick(sources);
  const response = http.get(`${baseUrl}/${source}/${encodeURIComponent(pick(words))}`, {
    headers: authHeaders,
    tags: { kind: 'lookup', name: `/${source}/{keywords}` },
    responseCallback: expectedStatuses,
  });
  lookupLatency.add(response.timings.duration);
  check(response, {
    'lookup answered': (r) => r.status === 200 || r.status === 404 || r.status === 429,
    'lookup is JSON': (r) => String(r.headers['Content-Type'] ?? '').includes('application/json'),
  });
}

export function sql(): void {
  // A handful of distinct queries, so that some hit the 5-minute result window (X-Service-Cached).
  const limit = 1 + Math.floor(Math.random() * 20);
  const response = http.post(
    `${baseUrl}/api/v1/query`,
    JSON.stringify({ sql: `SELECT title FROM arxiv ORDER BY title LIMIT ${limit}` }),
    {
      headers: { ...authHeaders, 'Content-Type': 'application/json' },
      tags: { kind: 'sql', name: '/api/v1/query' },
      responseCallback: expectedStatuses,
      timeout: '35s',
    },
  );
  if (response.status === 503) busy.add(1);
  check(response, { 'query answered': (r) => r.status === 200 || r.status === 402 || r.status === 429 });
}

export function exports(): void {
  group('exports', () => {
    const response = http.get(`${baseUrl}/api/v1/export/${pick(sources)}?format=parquet`, {
      headers: { ...authHeaders, Range: 'bytes=0-1048575' },
      tags: { kind: 'export', name: '/api/v1/export/{source}' },
      responseType: 'none',
      responseCallback: expectedStatuses,
      timeout: '120s',
    });
    exportBytes.add(Number(response.headers['Content-Length'] ?? 0));
    check(response, { 'export answered': (r) => r.status === 200 || r.status === 206 || r.status === 429 });
  });
  sleep(1);
}

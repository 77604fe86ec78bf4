/**
 * A real Prometheus (Debian's `prometheus`) scrapes metrics endpoints on loopback and
 * scripts/k8s/scrape-check.ts checks the series against the metrics contract. Until the api and
 * query-runner export the contract's names, the targets here are prom-client registries shaped
 * like them: a conforming api, and a leaky one that the check must reject. When the services land,
 * add a case that starts them on port 0 and expects `scrapeAndCheck` to return no problems.
 */
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { scrapeAndCheck } from './scrape-check.ts';
import { tools } from '@uda/test-support/k8s';

function serve(registry: Registry): Promise<Server> {
  const server = createServer((_req, res) => {
    void registry.metrics().then((text) => {
      res.setHeader('Content-Type', registry.contentType);
      res.end(text);
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function conformingApi(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const duration = new Histogram({ name: 'uda_http_request_duration_seconds', help: 'h', labelNames: ['route', 'status_class'], registers: [registry] });
  duration.observe({ route: '/:source/:keywords', status_class: '2xx' }, 0.05);
  duration.observe({ route: '/api/v1/query', status_class: '5xx' }, 1.5);
  for (const name of ['uda_refunds_total', 'uda_export_bytes_streamed_total', 'uda_query_backend_unavailable_total', 'uda_object_cache_evictions_total', 'uda_object_cache_warmed_total', 'uda_object_cache_warmed_bytes_total']) {
    new Counter({ name, help: 'c', registers: [registry] });
  }
  new Gauge({ name: 'uda_insurance_limiter_active', help: 'g', registers: [registry] });
  new Gauge({ name: 'uda_object_cache_bytes', help: 'g', registers: [registry] });
  new Counter({ name: 'uda_lookups_total', help: 'c', labelNames: ['source', 'outcome'], registers: [registry] }).inc({ source: 'pypi', outcome: 'hit' });
  return registry;
}

function leakyService(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const duration = new Histogram({ name: 'uda_http_request_duration_seconds', help: 'h', labelNames: ['route', 'status_class'], registers: [registry] });
  duration.observe({ route: '/api/v1/accounts/12345', status_class: '200' }, 0.05);
  const lookups = new Counter({ name: 'uda_lookups_total', help: 'c', labelNames: ['source', 'outcome'], registers: [registry] });
  lookups.inc({ source: 'pypi', outcome: '10.1.2.3' });
  lookups.inc({ source: `service_${'a'.repeat(40)}`, outcome: 'hit' });
  new Counter({ name: 'uda_unlisted_total', help: 'c', registers: [registry] });
  return registry;
}

describe('Prometheus scrape check', () => {
  const servers: Server[] = [];
  let problems: string[];
  beforeAll(async () => {
    tools(); // makes sure Debian's prometheus package (promtool and prometheus) is installed
    const [api, leaky] = [await serve(conformingApi()), await serve(leakyService())];
    servers.push(api, leaky);
    const url = (server: Server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
    problems = await scrapeAndCheck([
      { component: 'api', url: url(api) },
      { component: 'leaky', url: url(leaky) },
    ]);
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  });

  it('passes a service that exports the contract with template labels', () => {
    expect(problems.filter((problem) => problem.startsWith('api:') || problem.includes('"job":"api"'))).toEqual([]);
  });

  it('reports keys, IPs, raw paths, bad status classes and metrics outside the contract', () => {
    const leaky = problems.filter((problem) => problem.includes('"job":"leaky"') || problem.startsWith('leaky:'));
    expect(leaky).toEqual(
      expect.arrayContaining([
        'leaky: uda_unlisted_total is not in the metrics contract (docs/deploy.md)',
        expect.stringMatching(/uda_lookups_total.*label outcome carries an IP address/),
        expect.stringMatching(/uda_lookups_total.*label source carries an API key/),
        expect.stringMatching(/uda_http_request_duration_seconds_count.*route is not a route template/),
        expect.stringMatching(/uda_http_request_duration_seconds_count.*status_class is not Nxx/),
      ]),
    );
    expect(leaky).toHaveLength(5);
  });
});

/**
 * Prometheus metrics, one registry per service instance (so tests can run several in one process).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export class Metrics {
  readonly registry = new Registry();
  private readonly registers = [this.registry];
  readonly httpDuration = new Histogram<'method' | 'route' | 'status_class'>({
    name: 'uda_http_request_duration_seconds',
    help: 'HTTP request duration by route template and status class',
    labelNames: ['method', 'route', 'status_class'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: this.registers,
  });
  readonly rateLimitRejections = new Counter<'kind'>({
    name: 'uda_rate_limit_rejections_total',
    help: 'Requests refused with 429, by limit kind (burst, anonymous, export_daily, sheet_daily)',
    labelNames: ['kind'],
    registers: this.registers,
  });
  /** Micro-USD, so that the counter stays an exact integer. */
  readonly creditsChargedMicro = new Counter<'tier' | 'price_class'>({
    name: 'uda_credits_charged_micro_usd_total',
    help: 'Credits charged in micro-USD, by tier and price class (open, encyclopedia, export, mixed)',
    labelNames: ['tier', 'price_class'],
    registers: this.registers,
  });
  readonly refunds = new Counter({ name: 'uda_refunds_total', help: 'Charges refunded (broken downloads, failed deliveries)', registers: this.registers });
  readonly lookups = new Counter<'source' | 'outcome'>({
    name: 'uda_lookups_total',
    help: 'Lookups by source and outcome (hit, miss, stale, error code)',
    labelNames: ['source', 'outcome'],
    registers: this.registers,
  });
  readonly upstreamDuration = new Histogram<'source'>({
    name: 'uda_upstream_request_duration_seconds',
    help: 'Live upstream call duration',
    labelNames: ['source'],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: this.registers,
  });
  readonly exportBytes = new Counter({ name: 'uda_export_bytes_streamed_total', help: 'Bytes of export and result files sent', registers: this.registers });
  readonly mcpToolCalls = new Counter<'tool' | 'outcome'>({
    name: 'uda_mcp_tool_calls_total',
    help: 'MCP tool calls by tool and outcome',
    labelNames: ['tool', 'outcome'],
    registers: this.registers,
  });
  readonly backendUnavailable = new Counter({
    name: 'uda_query_backend_unavailable_total',
    help: 'Requests failed because no query-runner answered: QUERY_BACKEND_UNAVAILABLE, or SOURCE_UNAVAILABLE for a stored-source lookup',
    registers: this.registers,
  });
  readonly objectCacheLookups = new Counter<'outcome'>({
    name: 'uda_object_cache_lookups_total',
    help: 'Reads of export and result files by whether the pod disk cache held them (hit, miss)',
    labelNames: ['outcome'],
    registers: this.registers,
  });
  readonly objectCacheEvictions = new Counter({ name: 'uda_object_cache_evictions_total', help: 'Files evicted from the pod disk cache to make room', registers: this.registers });
  readonly objectCacheWarmed = new Counter({
    name: 'uda_object_cache_warmed_total',
    help: 'Export files copied into the pod disk cache by the warm-up after a new export version was published',
    registers: this.registers,
  });
  readonly objectCacheWarmedBytes = new Counter({
    name: 'uda_object_cache_warmed_bytes_total',
    help: 'Bytes of the export files the warm-up copied into the pod disk cache',
    registers: this.registers,
  });
  /** Read at scrape time: bytes the object cache holds on disk. */
  objectCacheBytes: () => number = () => 0;
  /** Read at scrape time: 1 while rate limits run on the in-process insurance limiter (Redis down). */
  insuranceActive: () => boolean = () => false;
  /** Read at scrape time: the circuit state of each live upstream. */
  openCircuits: () => Record<string, boolean> = () => ({});

  constructor(options: { defaultMetrics?: boolean } = {}) {
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
    this.registerScrapeGauges();
  }

  /** Gauges read at scrape time from the probes above, which the services set once they exist. */
  private registerScrapeGauges(): void {
    const registers = this.registers;
    const probes = { insurance: () => this.insuranceActive(), circuits: () => this.openCircuits(), cacheBytes: () => this.objectCacheBytes() };
    new Gauge({
      name: 'uda_object_cache_bytes',
      help: 'Bytes of export and result files the pod disk cache holds (fills in progress included)',
      registers,
      collect() {
        this.set(probes.cacheBytes());
      },
    });
    new Gauge({
      name: 'uda_insurance_limiter_active',
      help: '1 while rate limits run on the in-process insurance limiter because Redis is unreachable',
      registers,
      collect() {
        this.set(probes.insurance() ? 1 : 0);
      },
    });
    new Gauge({
      name: 'uda_upstream_circuit_open',
      help: '1 while the circuit breaker of a live upstream is open',
      labelNames: ['source'],
      registers,
      collect() {
        for (const [source, open] of Object.entries(probes.circuits())) this.set({ source }, open ? 1 : 0);
      },
    });
  }

  /**
   * Counts a request's failure where it is answered (the error handler, the MCP tools). No runner
   * answering reads as QUERY_BACKEND_UNAVAILABLE to SQL callers and SOURCE_UNAVAILABLE to stored-source
   * lookups (lookups/errors.ts); both mean the query backend is lost, which is what the alert watches.
   */
  failedWith(error: unknown): void {
    const code = (error as { code?: unknown } | null)?.code;
    if (code === 'QUERY_BACKEND_UNAVAILABLE' || code === 'SOURCE_UNAVAILABLE') this.backendUnavailable.inc();
  }

  cacheLookup(outcome: 'hit' | 'miss'): void {
    this.objectCacheLookups.inc({ outcome });
  }

  cacheEvicted(): void {
    this.objectCacheEvictions.inc();
  }

  cacheWarmed(bytes: number): void {
    this.objectCacheWarmed.inc();
    this.objectCacheWarmedBytes.inc(bytes);
  }
}

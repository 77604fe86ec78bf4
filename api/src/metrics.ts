/**
 * Prometheus metrics, one registry per service instance (so tests can run several in one process).
 */
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export class Metrics {
  readonly registry = new Registry();
  readonly httpDuration: Histogram<'method' | 'route' | 'status_class'>;
  readonly rateLimitRejections: Counter<'kind'>;
  readonly creditsChargedUsd: Counter;
  readonly creditsRefundedUsd: Counter;

  constructor(options: { defaultMetrics?: boolean } = {}) {
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
    this.httpDuration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration by route template and status class',
      labelNames: ['method', 'route', 'status_class'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [this.registry],
    });
    this.rateLimitRejections = new Counter({
      name: 'rate_limit_rejections_total',
      help: 'Requests refused with 429, by limit kind (burst, anonymous, export_daily, sheet_daily)',
      labelNames: ['kind'],
      registers: [this.registry],
    });
    this.creditsChargedUsd = new Counter({
      name: 'credits_charged_usd_total',
      help: 'Credits charged, USD',
      registers: [this.registry],
    });
    this.creditsRefundedUsd = new Counter({
      name: 'credits_refunded_usd_total',
      help: 'Credits refunded, USD',
      registers: [this.registry],
    });
  }
}

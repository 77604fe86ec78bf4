/**
 * Prometheus metrics, one registry per service instance (so tests can run several in one process).
 */
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export class Metrics {
  readonly registry = new Registry();
  readonly httpDuration: Histogram<'method' | 'route' | 'status_class'>;
  readonly rateLimitRejections: Counter<'kind'>;
  /** Micro-USD, so that the counter stays an exact integer. */
  readonly creditsChargedMicro: Counter<'tier' | 'price_class'>;
  readonly refunds: Counter;

  constructor(options: { defaultMetrics?: boolean } = {}) {
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
    this.httpDuration = new Histogram({
      name: 'uda_http_request_duration_seconds',
      help: 'HTTP request duration by route template and status class',
      labelNames: ['method', 'route', 'status_class'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [this.registry],
    });
    this.rateLimitRejections = new Counter({
      name: 'uda_rate_limit_rejections_total',
      help: 'Requests refused with 429, by limit kind (burst, anonymous, export_daily, sheet_daily)',
      labelNames: ['kind'],
      registers: [this.registry],
    });
    this.creditsChargedMicro = new Counter({
      name: 'uda_credits_charged_micro_usd_total',
      help: 'Credits charged in micro-USD, by tier and price class (open, encyclopedia, export, mixed)',
      labelNames: ['tier', 'price_class'],
      registers: [this.registry],
    });
    this.refunds = new Counter({
      name: 'uda_refunds_total',
      help: 'Charges refunded (broken downloads, failed deliveries)',
      registers: [this.registry],
    });
  }
}

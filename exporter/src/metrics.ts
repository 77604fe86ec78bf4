/**
 * A CronJob lives too briefly to be scraped, so the exporter pushes its outcome to a Prometheus
 * Pushgateway (when one is configured). It uses push-add, so that a failed run records its failure
 * time without erasing the last success, which is what the "exporter not succeeded" alert reads.
 */
import { Gauge, Pushgateway, Registry } from 'prom-client';

const JOB = 'uda-exporter';

export interface RunOutcome {
  readonly ok: boolean;
  readonly finishedAt: Date;
  readonly durationSeconds: number;
  /** Rows per table; only for a successful run. */
  readonly rows?: Readonly<Record<string, number>>;
}

export function outcomeRegistry(outcome: RunOutcome): Registry {
  const registry = new Registry();
  const seconds = outcome.finishedAt.getTime() / 1000;
  if (!outcome.ok) {
    new Gauge({ name: 'uda_exporter_last_failure_timestamp_seconds', help: 'End of the last failed export run', registers: [registry] }).set(seconds);
    return registry;
  }
  new Gauge({ name: 'uda_exporter_last_success_timestamp_seconds', help: 'End of the last successful export run', registers: [registry] }).set(seconds);
  new Gauge({ name: 'uda_exporter_duration_seconds', help: 'Duration of the last successful export run', registers: [registry] }).set(
    outcome.durationSeconds,
  );
  const rows = new Gauge({ name: 'uda_exporter_rows', help: 'Rows per table in the last published export', labelNames: ['table'], registers: [registry] });
  for (const [table, count] of Object.entries(outcome.rows ?? {})) rows.set({ table }, count);
  return registry;
}

export async function pushOutcome(pushgatewayUrl: string, outcome: RunOutcome): Promise<void> {
  const gateway = new Pushgateway(pushgatewayUrl, { timeout: 10_000 }, outcomeRegistry(outcome));
  await gateway.pushAdd({ jobName: JOB });
}

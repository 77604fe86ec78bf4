/**
 * The alert rules (charts/uda/files/alerts.rules.yaml): promtool checks them and runs their unit
 * tests; every alert has a unit test that expects it to fire, a runbook paragraph and only reads
 * metrics of the contract in docs/deploy.md. The unit tests' input series are shaped like a real
 * scrape: each carries exactly the labels its service's registry declares (plus the target labels
 * Prometheus adds), and `route` values are templates the api really answers under.
 */
import { describe, it, expect } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { Registry } from 'prom-client';
import { Metrics } from '@uda/api/metrics';
import { outcomeRegistry } from '@uda/exporter/metrics';
import { createMetrics } from '@uda/query-runner/metrics';
import { parseExposition } from '@uda/test-support/metrics';
import { chartDir, inContract, metricNamesIn, metricsContract, repo, run, tools } from '@uda/test-support/k8s';

const rulesFile = join(chartDir, 'files', 'alerts.rules.yaml');
const testsFile = join(chartDir, 'tests', 'alerts.test.yaml');
type Rule = { alert?: string; record?: string; expr: string; labels?: Record<string, string>; annotations?: Record<string, string> };
const groups = (parse(readFileSync(rulesFile, 'utf8')) as { groups: { name: string; rules: Rule[] }[] }).groups;
const rules = groups.flatMap((group) => group.rules);
const alerts = rules.filter((rule) => rule.alert);

describe('alert rules', () => {
  it('pass promtool check rules', () => {
    const result = run(tools().promtool, ['check', 'rules', rulesFile]);
    expect(result.stderr + result.stdout).toContain('SUCCESS');
    expect(result.status).toBe(0);
  });

  it('pass their promtool unit tests', () => {
    const result = run(tools().promtool, ['test', 'rules', testsFile]);
    expect(result.stdout + result.stderr).toContain('SUCCESS');
    expect(result.status).toBe(0);
  });

  it('cover every alert the issue lists', () => {
    expect(alerts.map((rule) => rule.alert).sort()).toEqual(
      expect.arrayContaining([
        'UdaApiErrorBudgetBurnFast', // high 5xx ratio, multi-window burn rate, 99.9% SLO
        'UdaApiErrorBudgetBurnSlow',
        'UdaApiLatencyP99High',
        'UdaQueryBackendUnavailable',
        'UdaQueryBusySurge',
        'UdaUpstreamCircuitOpen',
        'UdaExporterStale',
        'UdaRedisInsuranceLimiterActive',
        'UdaLedgerRefundSpike',
      ]),
    );
  });

  it('have a unit test in which each alert fires', () => {
    const tests = parse(readFileSync(testsFile, 'utf8')) as {
      tests: { alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[] }[];
    };
    const firing = new Set(
      tests.tests.flatMap((test) => (test.alert_rule_test ?? []).filter((t) => t.exp_alerts.length > 0).map((t) => t.alertname)),
    );
    expect(alerts.map((rule) => rule.alert).filter((name) => !firing.has(name!))).toEqual([]);
  });

  it('each have a severity, a summary and a runbook paragraph in docs/runbooks.md', () => {
    const runbooks = readFileSync(join(repo, 'docs', 'runbooks.md'), 'utf8');
    for (const rule of alerts) {
      expect({ alert: rule.alert, severity: ['page', 'ticket', 'warning'].includes(rule.labels?.severity ?? '') }).toEqual({ alert: rule.alert, severity: true });
      expect(rule.annotations?.summary).toBeTruthy();
      const anchor = rule.alert!.toLowerCase();
      expect(rule.annotations?.runbook_url).toMatch(new RegExp(`docs/runbooks\\.md#${anchor}$`));
      const section = runbooks.split(/^## /m).find((part) => part.startsWith(`${rule.alert}\n`));
      expect({ alert: rule.alert, paragraph: (section?.trim().length ?? 0) > 200 }).toEqual({ alert: rule.alert, paragraph: true });
    }
  });

  it('read only metrics of the metrics contract or recording rules', () => {
    const contract = metricsContract();
    const recorded = new Set(rules.flatMap((rule) => (rule.record ? [rule.record] : [])));
    const unknown = rules.flatMap((rule) => metricNamesIn(rule.expr).filter((name) => !recorded.has(name) && !inContract(contract, name)));
    expect(unknown).toEqual([]);
  });

  it('are embedded unchanged in the chart PrometheusRule', () => {
    const template = readFileSync(join(chartDir, 'templates', 'monitoring.yaml'), 'utf8');
    expect(template).toContain('.Files.Get "files/alerts.rules.yaml"');
  });

  it('feed their unit tests series with the label sets our processes export', () => {
    const declared = declaredLabels();
    const routes = new Set([...Object.keys((JSON.parse(readFileSync(join(repo, 'docs', 'openapi.json'), 'utf8')) as { paths: object }).paths), 'unmatched']);
    const tests = parse(readFileSync(testsFile, 'utf8')) as { tests: { input_series: { series: string }[] }[] };
    const problems: string[] = [];
    for (const { series } of tests.tests.flatMap((test) => test.input_series)) {
      const [sample] = parseExposition(`${series} 0`);
      if (!sample || sample.name === 'up') continue; // Prometheus's own series
      const base = sample.name.replace(/_(bucket|count|sum)$/, '');
      const expected = declared.get(sample.name) ?? declared.get(base);
      if (!expected) {
        problems.push(`${series}: no service registers ${sample.name}`);
        continue;
      }
      const own = Object.keys(sample.labels).filter((label) => !TARGET_LABELS.has(label));
      const wanted = [...expected, ...(sample.name.endsWith('_bucket') ? ['le'] : [])].sort();
      if (own.sort().join() !== wanted.join()) problems.push(`${series}: labels ${own.join()} where the registry has ${wanted.join()}`);
      if (sample.labels.route !== undefined && !routes.has(sample.labels.route)) problems.push(`${series}: ${sample.labels.route} is not a route template`);
      if (!sample.labels.namespace) problems.push(`${series}: no namespace label (the ServiceMonitor adds one)`);
    }
    expect(problems).toEqual([]);
  });
});

/** Labels Prometheus adds to a target's series (ServiceMonitor; the Pushgateway's with honor_labels off). */
const TARGET_LABELS = new Set(['namespace', 'service', 'endpoint', 'job', 'pod', 'container', 'instance', 'exported_job', 'exported_instance']);

/** Metric name → the label names its registry declares, over the api, the query-runner and the exporter. */
function declaredLabels(): Map<string, string[]> {
  const exporter = [
    outcomeRegistry({ ok: true, finishedAt: new Date(), durationSeconds: 1, rows: { t: 1 } }),
    outcomeRegistry({ ok: false, finishedAt: new Date(), durationSeconds: 1 }),
  ];
  const registries: Registry[] = [new Metrics({ defaultMetrics: false }).registry, createMetrics().registry, ...exporter];
  const declared = new Map<string, string[]>();
  for (const registry of registries) {
    for (const metric of registry.getMetricsAsArray()) {
      declared.set(metric.name, [...((metric as unknown as { labelNames?: string[] }).labelNames ?? [])]);
    }
  }
  return declared;
}

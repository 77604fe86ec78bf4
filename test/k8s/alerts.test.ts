/**
 * The alert rules (charts/uda/files/alerts.rules.yaml): promtool checks them and runs their unit
 * tests; every alert has a unit test that expects it to fire, a runbook paragraph and only reads
 * metrics of the contract in docs/deploy.md.
 */
import { describe, it, expect } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { chartDir, inContract, metricNamesIn, metricsContract, repo, run, tools } from './support.ts';

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
});

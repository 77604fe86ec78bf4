/**
 * The Grafana dashboard (charts/uda/files/dashboard.json) parses, and every query in it reads a
 * metric of the contract in docs/deploy.md ("Metrics contract"), so a renamed metric fails CI
 * instead of leaving an empty panel.
 */
import { describe, it, expect } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chartDir, inContract, metricNamesIn, metricsContract } from '@uda/test-support/k8s';

interface Panel {
  title: string;
  type: string;
  targets?: { expr: string }[];
  panels?: Panel[];
}
interface Dashboard {
  uid: string;
  title: string;
  panels: Panel[];
  templating: { list: { name: string; query?: string | { query: string } }[] };
}

const dashboard = JSON.parse(readFileSync(join(chartDir, 'files', 'dashboard.json'), 'utf8')) as Dashboard;
const panels = (list: Panel[]): Panel[] => list.flatMap((panel) => [panel, ...panels(panel.panels ?? [])]);
const queries = panels(dashboard.panels).flatMap((panel) => (panel.targets ?? []).map((target) => ({ panel: panel.title, expr: target.expr })));

describe('Grafana dashboard', () => {
  it('has a uid, a title and query panels', () => {
    expect(dashboard.uid).toBe('uda-overview');
    expect(dashboard.title).toBeTruthy();
    expect(queries.length).toBeGreaterThan(15);
  });

  it('reads only metrics of the metrics contract, and at least one in every query', () => {
    const contract = metricsContract();
    for (const { panel, expr } of queries) {
      const names = metricNamesIn(expr);
      expect({ panel, expr, names: names.length > 0 }).toEqual({ panel, expr, names: true });
      expect({ panel, unknown: names.filter((name) => !inContract(contract, name)) }).toEqual({ panel, unknown: [] });
    }
  });

  it('shows every uda_ metric of the contract somewhere', () => {
    const used = new Set(queries.flatMap(({ expr }) => metricNamesIn(expr)).map((name) => name.replace(/_(bucket|count|sum)$/, '')));
    const missing = [...metricsContract()].filter((name) => name.startsWith('uda_') && !used.has(name) && !used.has(`${name}_bucket`));
    expect(missing).toEqual([]);
  });

  it('its namespace variable reads a contract metric', () => {
    const variable = dashboard.templating.list.find((entry) => entry.name === 'namespace');
    const query = typeof variable?.query === 'string' ? variable.query : variable?.query?.query;
    const metric = /label_values\((\w+),/.exec(query ?? '')?.[1];
    expect(metric && inContract(metricsContract(), metric)).toBe(true);
  });

  it('the PromQL name extraction finds metrics and ignores functions, labels and ranges', () => {
    expect(metricNamesIn('sum by (route, le) (rate(uda_x_bucket{route!~"a|b",ns="$namespace"}[$__rate_interval])) / ignoring(le) up offset 1d * 1e6')).toEqual([
      'uda_x_bucket',
      'up',
    ]);
  });
});

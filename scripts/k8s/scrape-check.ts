/**
 * A real Prometheus (Debian's `prometheus`, found through scripts/k8s/tools.sh's PATH or
 * /usr/bin) scrapes running services on loopback, and the series they export are checked against
 * docs/deploy.md's "Metrics contract":
 * - every contract metric of the component that needs no traffic to exist (no labels) is there,
 *   plus the default process metrics;
 * - every `uda_` series is in the contract;
 * - no label value carries an API key, an IP address or a raw path, and `status_class` and
 *   `route` have their template shapes.
 *
 * CLI:  node scripts/k8s/scrape-check.ts api=http://127.0.0.1:9090/metrics query-runner=http://127.0.0.1:9091/metrics
 * Exits 1 and prints the problems when a check fails. Tests import `scrapeAndCheck` instead.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const repo = resolve(import.meta.dirname, '..', '..');

export interface Target {
  /** The component name as the contract's "exported by" column spells it: api, query-runner. */
  component: string;
  /** Full URL of the /metrics endpoint. */
  url: string;
}

interface ContractEntry {
  name: string;
  labels: string[];
  exportedBy: string;
}

/** The "Metrics contract" table of docs/deploy.md. */
export function readContract(path = join(repo, 'docs', 'deploy.md')): ContractEntry[] {
  const section = readFileSync(path, 'utf8').split(/^## /m).find((part) => part.startsWith('Metrics contract')) ?? '';
  const entries: ContractEntry[] = [];
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((cell) => cell.trim());
    const name = /^`([a-z_:][a-z0-9_:]*)`$/.exec(cells[1] ?? '')?.[1];
    if (!name) continue;
    const labels = [...(cells[3] ?? '').matchAll(/`([a-z_]+)`/g)].map((match) => match[1]!).filter((label) => !/^\dxx$/.test(label));
    entries.push({ name, labels: cells[3] === '—' ? [] : labels, exportedBy: cells[4] ?? '' });
  }
  return entries;
}

async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolvePort(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

async function getJson<T>(url: string): Promise<T> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return ((await response.json()) as { data: T }).data;
}

/** Starts Prometheus on a free loopback port scraping the targets every second; stop() kills it. */
export async function startPrometheus(targets: Target[], binary = 'prometheus') {
  const dir = mkdtempSync(join(tmpdir(), 'uda-prometheus-'));
  const port = await freePort();
  const jobs = targets.map(({ component, url }) => {
    const parsed = new URL(url);
    return [
      `  - job_name: ${JSON.stringify(component)}`,
      `    scrape_interval: 500ms`,
      `    metrics_path: ${JSON.stringify(parsed.pathname)}`,
      `    scheme: ${parsed.protocol.replace(':', '')}`,
      `    static_configs: [{ targets: [${JSON.stringify(parsed.host)}] }]`,
    ].join('\n');
  });
  writeFileSync(join(dir, 'prometheus.yml'), `global: { scrape_interval: 500ms }\nscrape_configs:\n${jobs.join('\n')}\n`);
  const child = spawn(
    binary,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((done) => child.once('exit', done));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let attempt = 0; ; attempt++) {
      if (child.exitCode !== null) throw new Error(`prometheus exited: ${stderr}`);
      const ready = await fetch(`${url}/-/ready`).then((r) => r.ok, () => false);
      if (ready) break;
      if (attempt > 100) throw new Error(`prometheus did not become ready: ${stderr}`);
      await sleep(100);
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, stop };
}

/** Waits until every target has been scraped successfully (`up == 1`) at least twice. */
async function waitForScrapes(url: string, targets: Target[]): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const result = await getJson<{ result: { metric: { job: string }; value: [number, string] }[] }>(
      `${url}/api/v1/query?query=${encodeURIComponent('count_over_time(up[1m]) >= 2 and up == 1')}`,
    );
    const scraped = new Set(result.result.map((sample) => sample.metric.job));
    if (targets.every((target) => scraped.has(target.component))) return;
    await sleep(250);
  }
  const up = await getJson<unknown>(`${url}/api/v1/targets`);
  throw new Error(`targets were not scraped: ${JSON.stringify(up)}`);
}

const ipv4 = /(^|[^\d.])(\d{1,3}\.){3}\d{1,3}([^\d.]|$)/;
const ipv6 = /([0-9a-f]{1,4}:){2,}[0-9a-f]{0,4}|::ffff:/i;
const apiKey = /(service_|dk_)[A-Za-z0-9]{8,}|Bearer\s/;
const routeTemplate = /^(\/[A-Za-z0-9_.:{}*-]*)*$|^(unmatched|not_found|other)$/;

/** Label values that leak a key or an IP, or look like a raw path instead of a template. */
export function labelProblems(series: Record<string, string>[]): string[] {
  const problems: string[] = [];
  for (const labels of series) {
    // A histogram's _bucket and _sum carry the labels of its _count: check each set once.
    if (/_(bucket|sum)$/.test(labels.__name__ ?? '')) continue;
    const where = `${labels.__name__}${JSON.stringify(labels)}`;
    for (const [label, value] of Object.entries(labels)) {
      if (label === 'instance' || label === '__name__' || label === 'job') continue;
      if (apiKey.test(value)) problems.push(`${where}: label ${label} carries an API key`);
      if (label !== 'le' && label !== 'version' && (ipv4.test(value) || ipv6.test(value))) problems.push(`${where}: label ${label} carries an IP address`);
      if (value.length > 120) problems.push(`${where}: label ${label} is ${value.length} characters long`);
    }
    if (labels.status_class !== undefined && !/^[1-5]xx$/.test(labels.status_class)) problems.push(`${where}: status_class is not Nxx`);
    if (labels.route !== undefined && (!routeTemplate.test(labels.route) || /\/\d+(\/|$)|[?#%]/.test(labels.route))) {
      problems.push(`${where}: route is not a route template`);
    }
  }
  return problems;
}

/**
 * Scrapes the targets with a real Prometheus and returns every problem found (empty = pass).
 * Generate some traffic first: labelled counters only exist once incremented.
 */
export async function scrapeAndCheck(targets: Target[], options: { binary?: string; contractPath?: string } = {}): Promise<string[]> {
  const contract = readContract(options.contractPath);
  const known = new Set(contract.map((entry) => entry.name));
  const prometheus = await startPrometheus(targets, options.binary);
  try {
    await waitForScrapes(prometheus.url, targets);
    const problems: string[] = [];
    for (const target of targets) {
      const match = encodeURIComponent(`{job="${target.component}"}`);
      const names = new Set(await getJson<string[]>(`${prometheus.url}/api/v1/label/__name__/values?match[]=${match}`));
      const required = contract.filter(
        (entry) => entry.labels.length === 0 && (entry.exportedBy === target.component || entry.exportedBy.startsWith('every pod')),
      );
      for (const entry of required) {
        const present = [entry.name, `${entry.name}_count`, `${entry.name}_bucket`].some((name) => names.has(name));
        if (!present) problems.push(`${target.component}: ${entry.name} is missing`);
      }
      for (const name of names) {
        if (name.startsWith('uda_') && !known.has(name.replace(/_(bucket|count|sum)$/, '')) && !known.has(name)) {
          problems.push(`${target.component}: ${name} is not in the metrics contract (docs/deploy.md)`);
        }
      }
      const series = await getJson<Record<string, string>[]>(`${prometheus.url}/api/v1/series?match[]=${match}`);
      problems.push(...labelProblems(series));
    }
    return problems;
  } finally {
    await prometheus.stop();
  }
}

if (import.meta.filename === resolve(process.argv[1] ?? '')) {
  const targets = process.argv.slice(2).map((arg) => {
    const [component, url] = arg.split(/=(.*)/s);
    if (!component || !url) throw new Error(`expected component=url, got ${arg}`);
    return { component, url };
  });
  if (targets.length === 0) {
    process.stderr.write('usage: node scripts/k8s/scrape-check.ts api=http://127.0.0.1:9090/metrics query-runner=http://127.0.0.1:9091/metrics\n');
    process.exit(2);
  }
  const problems = await scrapeAndCheck(targets);
  for (const problem of problems) process.stdout.write(`${problem}\n`);
  process.stdout.write(problems.length === 0 ? 'scrape check passed\n' : `${problems.length} problem(s)\n`);
  process.exitCode = problems.length === 0 ? 0 : 1;
}

/**
 * What the load test counts while it runs (per route: latencies, answers by label, credit charged)
 * and the report it prints at the end: throughput and p50/p99 per route, every answer label with the
 * unexpected ones marked, the ledger reconciliation and the peak RSS of every process.
 */
import { availableParallelism } from 'node:os';
import { type BalanceCheck, formatBalances } from './balances.ts';
import type { FaultReport } from './faults.ts';
import type { Route } from './mix.ts';
import { formatInvariant, holds, type Invariant } from './reconcile.ts';

const cpus = availableParallelism();

interface RouteTally {
  readonly route: Route;
  readonly latenciesMs: number[];
  readonly outcomes: Map<string, number>;
  /** The first request and answer body of each unexpected label, to reproduce it by hand. */
  readonly samples: Map<string, string>;
  costMicro: number;
}

/** What paying accounts (Developer, Pro) saw: the promise capacity classes make them under a free flood. */
interface PayingTally {
  readonly sqlLatenciesMs: number[];
  requests: number;
  unexpected: number;
}

export interface Tally {
  readonly routes: Map<string, RouteTally>;
  readonly paying: PayingTally;
  /** Σ X-Credit-Cost received per account id, micro-USD. */
  readonly costByAccount: Map<string, number>;
  /** Connection errors and timeouts: requests that got no answer at all. */
  transportErrors: number;
}

export function newTally(): Tally {
  return { routes: new Map(), paying: { sqlLatenciesMs: [], requests: 0, unexpected: 0 }, costByAccount: new Map(), transportErrors: 0 };
}

export interface Answer {
  readonly outcome: string;
  readonly latencyMs: number;
  readonly costMicro: number;
  readonly accountId: string | undefined;
  /** The caller's tier; none for an anonymous one. */
  readonly tier?: string | undefined;
  /** `METHOD path` and the body, kept only for an unexpected answer. */
  readonly request: string;
  readonly body: string;
}

export function record(tally: Tally, route: Route, answer: Answer): void {
  let entry = tally.routes.get(route.name);
  if (!entry) tally.routes.set(route.name, (entry = { route, latenciesMs: [], outcomes: new Map(), samples: new Map(), costMicro: 0 }));
  const { outcome, latencyMs, costMicro } = answer;
  if (!route.expected.includes(outcome) && !entry.samples.has(outcome)) entry.samples.set(outcome, `${answer.request} -> ${answer.body.slice(0, 300)}`);
  entry.latenciesMs.push(latencyMs);
  if (answer.accountId) tally.costByAccount.set(answer.accountId, (tally.costByAccount.get(answer.accountId) ?? 0) + costMicro);
  entry.outcomes.set(outcome, (entry.outcomes.get(outcome) ?? 0) + 1);
  entry.costMicro += costMicro;
  if (answer.tier === 'developer' || answer.tier === 'pro') recordPaying(tally.paying, route, answer);
}

function recordPaying(paying: PayingTally, route: Route, answer: Answer): void {
  paying.requests += 1;
  if (!route.expected.includes(answer.outcome)) paying.unexpected += 1;
  if (route.name.startsWith('SQL')) paying.sqlLatenciesMs.push(answer.latencyMs);
}

export interface Ledger {
  /** Σ charges − Σ refunds, micro-USD. */
  readonly netMicro: number;
  readonly charges: number;
  readonly refunds: number;
  /** The same net per account id. */
  readonly netByAccount: Map<string, number>;
}

export interface LoadReport {
  readonly accounts: number;
  readonly connections: number;
  readonly elapsedS: number;
  readonly routes: RouteSummary[];
  readonly requests: number;
  readonly unexpected: number;
  readonly transportErrors: number;
  readonly receivedMicro: number;
  readonly ledger: Ledger;
  /** The money invariants per account (`reconcile.ts`), each equal or naming the accounts that differ. */
  readonly invariants: Invariant[];
  /** The faults injected (LOAD_FAULTS) and what each window saw; absent without faults. */
  readonly faults?: FaultReport;
  /** Every account's balance, from the API and admin, against deposits − ledger. */
  readonly balances: BalanceCheck;
  readonly processes: ProcessUse[];
  /** The machine's 1-minute load average when the mix ended: how much else was running. */
  readonly loadAverage: number;
  /** p99 latency of every answer of the mix (the callers other than the attackers), ms. */
  readonly p99Ms: number;
  /** Paying accounts' answers during the mix: requests, unexpected ones (goal 0), and their SQL p99. */
  readonly paying: { readonly requests: number; readonly unexpected: number; readonly sqlRequests: number; readonly sqlP99Ms: number };
  /** The attack beside the mix, and the attackers' own answers. */
  readonly abuse: { readonly accounts: number; readonly queriesEach: number; readonly outcomes: Map<string, number> };
  /** Where the processes' logs were kept, when the run was not healthy. */
  readonly logs?: string;
}

/**
 * No unexpected answer (with faults: none outside their windows, and only 503 with Retry-After inside),
 * every invariant equal per account (api-kill's forgiven charges named apart), every balance true.
 */
export function isHealthy(report: Omit<LoadReport, 'logs'>): boolean {
  const balancesTrue = report.balances.apiOff.length === 0 && report.balances.adminOff.length === 0;
  return report.unexpected === 0 && report.invariants.every(holds) && balancesTrue;
}

export interface ProcessUse {
  readonly name: string;
  readonly peakMb: number;
  /** CPU seconds (user + system) spent during the mix. */
  readonly cpuS: number;
}

export interface RouteSummary {
  readonly name: string;
  readonly requests: number;
  readonly perSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly outcomes: { label: string; count: number; expected: boolean }[];
  readonly unexpected: number;
  readonly samples: string[];
  readonly costMicro: number;
}

export function summarize(
  tally: Tally,
  elapsedS: number,
): { routes: RouteSummary[]; requests: number; unexpected: number; receivedMicro: number; p99Ms: number; paying: LoadReport['paying'] } {
  const routes = [...tally.routes.values()].map((t) => summarizeRoute(t, elapsedS));
  const all = [...tally.routes.values()].flatMap((t) => t.latenciesMs).sort((a, b) => a - b);
  const { requests, unexpected, sqlLatenciesMs } = tally.paying;
  const payingSql = [...sqlLatenciesMs].sort((a, b) => a - b);
  return {
    routes,
    p99Ms: percentile(all, 0.99),
    paying: { requests, unexpected, sqlRequests: payingSql.length, sqlP99Ms: percentile(payingSql, 0.99) },
    requests: routes.reduce((n, r) => n + r.requests, 0),
    unexpected: routes.reduce((n, r) => n + r.unexpected, 0) + tally.transportErrors,
    receivedMicro: routes.reduce((n, r) => n + r.costMicro, 0),
  };
}

const usd = (micro: number) => `$${(micro / 1_000_000).toFixed(6)}`;

function summarizeRoute(t: RouteTally, elapsedS: number): RouteSummary {
  const sorted = [...t.latenciesMs].sort((a, b) => a - b);
  const outcomes = [...t.outcomes.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([label, count]) => ({ label, count, expected: t.route.expected.includes(label) }));
  return {
    name: t.route.name,
    requests: sorted.length,
    perSecond: sorted.length / elapsedS,
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
    outcomes,
    unexpected: outcomes.filter((o) => !o.expected).reduce((n, o) => n + o.count, 0),
    samples: [...t.samples.entries()].map(([label, sample]) => `${label}: ${sample}`),
    costMicro: t.costMicro,
  };
}

/** The attack's lines: what the other callers saw while it ran (p99, unexpected; goal 0), and the attackers' own answers. */
function abuseLines(report: LoadReport): string[] {
  const { abuse } = report;
  if (abuse.accounts === 0) return [];
  const answers = [...abuse.outcomes.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([label, n]) => `${label}: ${n}`).join(', ');
  return [
    `Abuse beside the mix: ${abuse.accounts} free account(s), ${abuse.queriesEach} uninterruptible queries each at once, over and over`,
    `  other callers during it: p99 ${report.p99Ms.toFixed(1)} ms over all routes, ${report.unexpected} unexpected answers (goal 0)`,
    `  paying accounts (Developer, Pro) during it: ${report.paying.unexpected} unexpected answers of ${report.paying.requests} (goal 0); ` +
      `SQL p99 ${report.paying.sqlP99Ms.toFixed(1)} ms over ${report.paying.sqlRequests} SQL requests`,
    `  the attackers' answers: ${answers || 'none'}`,
  ];
}

/** Per fault: when, what the window saw, how long until every route answered again. */
function faultLines(report: LoadReport): string[] {
  if (!report.faults) return [];
  const labels = (map: Map<string, number>) => [...map.entries()].map(([label, n]) => `${label}: ${n}`).join(', ') || 'none';
  const total = (map: Map<string, number>) => [...map.values()].reduce((n, v) => n + v, 0);
  const lines = [
    '',
    `${'fault'.padEnd(13)} ${'at s'.padStart(6)} ${'back s'.padStart(7)} ${'answers again after s'.padStart(22)} ${'503+Retry-After'.padStart(16)} ${'refused by stopped API'.padStart(23)} ${'unexpected (goal 0)'.padStart(20)}`,
  ];
  for (const f of report.faults.faults) {
    const recover = f.recoverS === undefined ? 'never' : f.recoverS.toFixed(1);
    lines.push(
      `${f.name.padEnd(13)} ${f.injectedS.toFixed(1).padStart(6)} ${f.restoredS.toFixed(1).padStart(7)} ${recover.padStart(22)} ${String(total(f.retryLater)).padStart(16)} ${String(total(f.refusedByStoppedApi)).padStart(23)} ${String(total(f.unexpected)).padStart(20)}`,
    );
  }
  for (const f of report.faults.faults) {
    lines.push(`  ${f.name}: ${f.what}`, `    503 with Retry-After: ${labels(f.retryLater)}`);
    if (f.refusedByStoppedApi.size) lines.push(`    refused by the stopped API: ${labels(f.refusedByStoppedApi)}`);
    lines.push(`    unexpected: ${labels(f.unexpected)}`);
  }
  lines.push(`Unexpected answers outside the fault windows (goal 0): ${total(report.faults.unexpectedOutside)}${report.faults.unexpectedOutside.size ? ` (${labels(report.faults.unexpectedOutside)})` : ''}`, '');
  return lines;
}

function percentile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN;
}

export function formatReport(report: LoadReport, command: string): string {
  const lines = [
    '',
    `Mixed load: ${report.accounts} accounts, ${report.connections} connections over 2 API processes, ${report.elapsedS.toFixed(1)} s (drained, no request cut)`,
    '',
    `${'route'.padEnd(30)} ${'requests'.padStart(8)} ${'req/s'.padStart(7)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)}  answers (! = not given by a healthy service)`,
  ];
  for (const r of report.routes) {
    const answers = r.outcomes.map((o) => `${o.expected ? '' : '!'}${o.label}: ${o.count}`).join(', ');
    lines.push(`${r.name.padEnd(30)} ${String(r.requests).padStart(8)} ${r.perSecond.toFixed(1).padStart(7)} ${r.p50Ms.toFixed(1).padStart(7)} ${r.p99Ms.toFixed(1).padStart(7)}  ${answers}`);
  }
  lines.push(
    `${'all routes'.padEnd(30)} ${String(report.requests).padStart(8)} ${(report.requests / report.elapsedS).toFixed(1).padStart(7)} ${''.padStart(7)} ${report.p99Ms.toFixed(1).padStart(7)}`,
    '',
    report.faults
      ? `Unexpected answers: ${report.unexpected} (goal 0; the faults' windows below say which answers they allow); requests without an answer (connection errors): ${report.transportErrors}`
      : `Unexpected answers: ${report.unexpected} (of which ${report.transportErrors} connection errors or timeouts); goal 0`,
    ...abuseLines(report),
    ...report.routes.flatMap((r) => r.samples.map((sample) => `  first ${sample}`)),
    ...faultLines(report),
    `Ledger: Σ charges − refunds in PostgreSQL ${usd(report.ledger.netMicro)} (${report.ledger.charges} charge rows, ${report.ledger.refunds} refund rows); Σ X-Credit-Cost received ${usd(report.receivedMicro)}`,
    `Reconciliation per account (${report.accounts} accounts):`,
    ...report.invariants.map(formatInvariant),
    ...formatBalances(report.balances),
    '',
    `${'process'.padEnd(30)} ${'peak RSS (VmHWM)'.padStart(16)} ${'CPU s during the mix'.padStart(21)}`,
    ...report.processes.map((p) => `${p.name.padEnd(30)} ${`${p.peakMb.toFixed(0)} MB`.padStart(16)} ${p.cpuS.toFixed(1).padStart(21)}`),
    `${'all'.padEnd(30)} ${''.padStart(16)} ${report.processes.reduce((n, p) => n + p.cpuS, 0).toFixed(1).padStart(21)}  (of ${(report.elapsedS * cpus).toFixed(0)} s on ${cpus} cores; the rest went to PostgreSQL, Redis and other work on the machine)`,
    '',
    `Machine: ${cpus} cores, 1-minute load average ${report.loadAverage.toFixed(1)} when the mix ended (figures from a shared machine are noisy)`,
    ...(report.logs ? [`Logs of every process kept in ${report.logs}`] : []),
    `Command: ${command}`,
  );
  return lines.join('\n');
}

/**
 * One mixed-load run, start to finish: the topology, the accounts, the timed mix with its faults,
 * the balances while the APIs still run, then the figures that need the services stopped (the ledger
 * is read after the APIs have exited gracefully, so every refund of a cut delivery is written).
 * Everything started is stopped, whatever happens.
 */
import { loadavg } from 'node:os';
import { onServer } from '@uda/api/bench/support';
import { startAbuse } from './abuse.ts';
import { createAccounts, type LoadAccount } from './accounts.ts';
import { checkBalances } from './balances.ts';
import type { LoadConfig } from './config.ts';
import { drive } from './drive.ts';
import { newFaultTracker, refundsAfterRedisLoss } from './faults.ts';
import { type ByAccount, ledgerEqualsReceived, usageLogEqualsLedger, usageLogEqualsReceived } from './reconcile.ts';
import { isHealthy, type Ledger, type LoadReport, newTally, type ProcessUse, summarize } from './report.ts';
import { netOfRefunds, readLedgerCharges, readTimedRefunds, readUsageLog, rowsWithoutRecords } from './usage-log.ts';
import { printLogs, type ProcessSample, startTopology, type Topology } from './topology.ts';

export interface RunHooks {
  /** Receives the function that stops every process of the run, for a signal handler. */
  stoppable?(stop: () => Promise<void>): void;
  /** Where progress lines go (`npm run load` prints them to stderr; the smoke test keeps quiet). */
  progress?(line: string): void;
}

const sleep = (s: number) => new Promise((resolve) => setTimeout(resolve, s * 1000));

export async function runLoad(config: LoadConfig, hooks: RunHooks = {}): Promise<LoadReport> {
  const progress = hooks.progress ?? (() => undefined);
  progress(`starting s3rver, the exporter, 2 query-runners and 2 APIs${config.LOAD_FAULTS.length ? ', on a PostgreSQL and a Redis of the run' : ''}…`);
  const topology = await startTopology(config, hooks.stoppable);
  try {
    progress(`creating ${config.LOAD_ACCOUNTS} accounts with keys and top-offs…`);
    const accounts = await createAccounts(topology.adminUrl, topology.adminToken, config.LOAD_ACCOUNTS);
    const { attackers, callers } = splitAttackers(accounts, config.LOAD_ABUSE_ACCOUNTS);
    progress(`driving the mix for ${config.LOAD_DURATION_S} s over ${config.LOAD_CONNECTIONS} connections, ${attackers.length} attacking account(s) beside it…`);
    const tally = newTally();
    const before = [...topology.sample(), driverSample()];
    const abuse = startAbuse(topology.apiUrls, attackers, config.LOAD_ABUSE_QUERIES);
    const { tracker, until } = scheduleFaults(config, topology, progress);
    const elapsedS = await drive(topology.apiUrls, callers, config.LOAD_CONNECTIONS, tally, { until: until.done, observe: tracker.observe, startedMs: until.startedMs }).finally(() =>
      abuse.stop(),
    );
    await until.done; // a fault that failed to inject fails the run
    const processes = processUse(before, [...topology.sample(), driverSample()]);
    const [loadAverage = NaN] = loadavg();
    progress('reading every balance from the API and admin…');
    const balances = await checkBalances(topology.apiUrls[0]!, topology.adminUrl, topology.adminToken, accounts, (await settledLedger(topology.databaseUrl)).netByAccount);
    progress('stopping the APIs gracefully, then reading the ledger…');
    await topology.stopApis();
    const ledger = await readLedger(topology.databaseUrl);
    progress('reading the usage log (every usage/ Parquet file of the bucket)…');
    const [usageLog, ledgerCharges] = [await readUsageLog(topology.bucket), await readLedgerCharges(topology.databaseUrl)];
    const summary = summarize(tally, elapsedS);
    const faults = config.LOAD_FAULTS.length ? tracker.report(elapsedS, summary.routes.map((r) => r.name)) : undefined;
    // Short by what an api-kill forgave, or by a refund after Redis forgot its charge's completion.
    const afterLoss = refundsAfterRedisLoss(await readTimedRefunds(topology.databaseUrl), faults?.redisLossesAtMs ?? []);
    const forgivable = addUp(faults?.forgivableMicro ?? new Map<string, number>(), afterLoss);
    const report = {
      accounts: accounts.length,
      connections: config.LOAD_CONNECTIONS,
      elapsedS,
      ...summary,
      // With faults, what a fault's window allows (503 with Retry-After) is not unexpected.
      unexpected: faults ? unexpectedWithFaults(faults) : summary.unexpected,
      transportErrors: tally.transportErrors,
      ledger,
      invariants: [
        usageLogEqualsReceived(netOfRefunds(usageLog.all.micro, ledgerCharges.refundsMicro), tally.costByAccount, forgivable),
        usageLogEqualsLedger(usageLog.charged, ledgerCharges.charges, rowsWithoutRecords(ledgerCharges, usageLog)),
        ledgerEqualsReceived(ledger.netByAccount, tally.costByAccount, forgivable),
      ],
      faults,
      balances,
      processes,
      loadAverage,
      abuse: { accounts: attackers.length, queriesEach: config.LOAD_ABUSE_QUERIES, outcomes: abuse.outcomes },
    };
    return isHealthy(report) ? report : { ...report, logs: await topology.keepLogs() };
  } catch (error) {
    await printLogs(topology.processes);
    throw error;
  } finally {
    await topology.stop();
  }
}

/**
 * The faults, one after the other: the first a share of the duration in, each next one as long after
 * the last one's restore. The mix runs at least LOAD_DURATION_S, and that share past the last restore.
 */
function scheduleFaults(config: LoadConfig, topology: Topology, progress: (line: string) => void) {
  const tracker = newFaultTracker();
  const startedMs = performance.now();
  const names = config.LOAD_FAULTS;
  const shareS = config.LOAD_DURATION_S / (names.length + 1);
  const nowS = () => (performance.now() - startedMs) / 1000;
  const injected = tracker.run(topology.targets, names, { firstAtS: shareS, gapS: shareS, downS: config.LOAD_FAULT_DOWN_S, nowS, progress });
  const done = Promise.all([sleep(config.LOAD_DURATION_S), injected.then(() => (names.length ? sleep(shareS) : undefined))]);
  return { tracker, until: { done, startedMs } };
}

function unexpectedWithFaults(faults: NonNullable<LoadReport['faults']>): number {
  const sum = (map: Map<string, number>) => [...map.values()].reduce((n, v) => n + v, 0);
  return sum(faults.unexpectedOutside) + faults.faults.reduce((n, f) => n + sum(f.unexpected), 0);
}

/** The attackers are free-tier accounts (the smallest share), kept out of the normal mix. */
function splitAttackers(accounts: LoadAccount[], count: number): { attackers: LoadAccount[]; callers: LoadAccount[] } {
  const attackers = accounts.filter((a) => a.tier === 'free').slice(0, count);
  return { attackers, callers: accounts.filter((a) => !attackers.includes(a)) };
}

/** This process: autocannon's CPU time competes with the services' on the same machine. */
function driverSample(): ProcessSample {
  const { user, system } = process.cpuUsage();
  return { name: 'load driver (autocannon)', peakMb: process.resourceUsage().maxRSS / 1024, cpuS: (user + system) / 1e6 };
}

/**
 * Peak RSS at the end, and CPU seconds spent during the mix. A process started during it (a query
 * worker, or one a fault restarted: less CPU than before under the same name) counts from 0.
 */
function processUse(before: ProcessSample[], after: ProcessSample[]): ProcessUse[] {
  const cpuBefore = new Map(before.map((p) => [p.name, p.cpuS]));
  return after.map((p) => {
    const spent = p.cpuS - (cpuBefore.get(p.name) ?? 0);
    return { name: p.name, peakMb: p.peakMb, cpuS: spent >= 0 ? spent : p.cpuS };
  });
}

/** The ledger once the APIs' flushes have written what the mix charged: two reads half a second apart agree (bounded). */
async function settledLedger(databaseUrl: string): Promise<Ledger> {
  let last = await readLedger(databaseUrl);
  for (let attempt = 0; attempt < 20; attempt++) {
    await sleep(0.5);
    const next = await readLedger(databaseUrl);
    if (next.netMicro === last.netMicro && next.charges === last.charges && next.refunds === last.refunds) return next;
    last = next;
  }
  return last;
}

/** Charges less refunds: credit leases and their returns move balance, they are not charges. */
async function readLedger(databaseUrl: string): Promise<Ledger> {
  const rows = await onServer<{ account_id: string; net: string; charges: string; refunds: string }>(
    databaseUrl,
    `SELECT account_id, sum(amount_micro) AS net, count(*) FILTER (WHERE kind = 'charge') AS charges,
            count(*) FILTER (WHERE kind = 'refund') AS refunds
     FROM ledger WHERE kind IN ('charge', 'refund') GROUP BY account_id`,
  );
  const total = (field: 'net' | 'charges' | 'refunds') => rows.reduce((n, row) => n + Number(row[field]), 0);
  return {
    netMicro: total('net'),
    charges: total('charges'),
    refunds: total('refunds'),
    netByAccount: new Map(rows.map((row) => [row.account_id, Number(row.net)])),
  };
}

/** Two per-account sums, added. */
function addUp(a: ByAccount, b: ByAccount): Map<string, number> {
  const sum = new Map(a);
  for (const [account, micro] of b) sum.set(account, (sum.get(account) ?? 0) + micro);
  return sum;
}

/**
 * One mixed-load run, start to finish: the topology, the accounts, the timed mix, then the figures
 * that need the services stopped (the ledger is read after the APIs have exited gracefully, so every
 * refund of a cut delivery is written). Everything started is stopped, whatever happens.
 */
import { loadavg } from 'node:os';
import { onServer } from '@uda/api/bench/support';
import { startAbuse } from './abuse.ts';
import { createAccounts, type LoadAccount } from './accounts.ts';
import type { LoadConfig } from './config.ts';
import { drive } from './drive.ts';
import { accountsOff, isHealthy, type Ledger, type LoadReport, newTally, type ProcessUse, summarize } from './report.ts';
import { printLogs, type ProcessSample, startTopology } from './topology.ts';

export interface RunHooks {
  /** Receives the function that stops every process of the run, for a signal handler. */
  stoppable?(stop: () => Promise<void>): void;
  /** Where progress lines go (`npm run load` prints them to stderr; the smoke test keeps quiet). */
  progress?(line: string): void;
}

export async function runLoad(config: LoadConfig, hooks: RunHooks = {}): Promise<LoadReport> {
  const progress = hooks.progress ?? (() => undefined);
  progress('starting s3rver, the exporter, 2 query-runners and 2 APIs…');
  const topology = await startTopology(config, hooks.stoppable);
  try {
    progress(`creating ${config.LOAD_ACCOUNTS} accounts with keys and top-offs…`);
    const accounts = await createAccounts(topology.adminUrl, topology.adminToken, config.LOAD_ACCOUNTS);
    const { attackers, callers } = splitAttackers(accounts, config.LOAD_ABUSE_ACCOUNTS);
    progress(`driving the mix for ${config.LOAD_DURATION_S} s over ${config.LOAD_CONNECTIONS} connections, ${attackers.length} attacking account(s) beside it…`);
    const tally = newTally();
    const before = [...topology.sample(), driverSample()];
    const abuse = startAbuse(topology.apiUrls, attackers, config.LOAD_ABUSE_QUERIES);
    const elapsedS = await drive(topology.apiUrls, callers, config.LOAD_CONNECTIONS, config.LOAD_DURATION_S, tally).finally(() => abuse.stop());
    const processes = processUse(before, [...topology.sample(), driverSample()]);
    const [loadAverage = NaN] = loadavg();
    progress('stopping the APIs gracefully, then reading the ledger…');
    await topology.stopApis();
    const ledger = await readLedger(topology.databaseUrl);
    const report = {
      accounts: accounts.length,
      connections: config.LOAD_CONNECTIONS,
      elapsedS,
      ...summarize(tally, elapsedS),
      transportErrors: tally.transportErrors,
      ledger,
      accountsOff: accountsOff(ledger, tally),
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

/** Peak RSS at the end, and CPU seconds spent during the mix (a process started during it counts from 0). */
function processUse(before: ProcessSample[], after: ProcessSample[]): ProcessUse[] {
  const cpuBefore = new Map(before.map((p) => [p.name, p.cpuS]));
  return after.map((p) => ({ name: p.name, peakMb: p.peakMb, cpuS: p.cpuS - (cpuBefore.get(p.name) ?? 0) }));
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

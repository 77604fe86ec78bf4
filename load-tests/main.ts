/**
 * `npm run load`: the mixed-load test (see README.md in this folder). Prints the report
 * and exits 1 when an answer was unexpected (with LOAD_FAULTS: outside a fault's window, or other than
 * a 503 with Retry-After inside it), an account's money differs, or a balance is not deposits − ledger.
 * Ctrl-C or SIGTERM stops every process it started.
 */
import { loadConfigOrExit } from '@uda/shared/config';
import { parseLoadConfig } from './config.ts';
import { formatReport, isHealthy } from './report.ts';
import { runLoad } from './run.ts';

const config = loadConfigOrExit(() => parseLoadConfig(process.env));
const command =
  `LOAD_DURATION_S=${config.LOAD_DURATION_S} LOAD_ACCOUNTS=${config.LOAD_ACCOUNTS} LOAD_CONNECTIONS=${config.LOAD_CONNECTIONS} ` +
  `LOAD_ABUSE_ACCOUNTS=${config.LOAD_ABUSE_ACCOUNTS} LOAD_ABUSE_QUERIES=${config.LOAD_ABUSE_QUERIES} ` +
  (config.LOAD_FAULTS.length ? `LOAD_FAULTS=${config.LOAD_FAULTS.join(',')} LOAD_FAULT_DOWN_S=${config.LOAD_FAULT_DOWN_S} ` : '') +
  'npm run load';

let stopAll: (() => Promise<void>) | undefined;
const interrupt = (signal: string) => {
  console.error(`[load] ${signal}: stopping everything`);
  void (stopAll?.() ?? Promise.resolve()).finally(() => process.exit(130));
};
process.once('SIGINT', () => interrupt('SIGINT'));
process.once('SIGTERM', () => interrupt('SIGTERM'));

const report = await runLoad(config, { stoppable: (stop) => (stopAll = stop), progress: (line) => console.error(`[load] ${line}`) });
console.log(formatReport(report, command));
process.exit(isHealthy(report) ? 0 : 1);

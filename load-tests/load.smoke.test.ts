/**
 * CI smoke of `npm run load`: the same harness on the same topology (two APIs, two runners, real
 * PostgreSQL, Redis and S3 server), a few seconds over 20 accounts, with Redis flushed mid-mix
 * (`LOAD_FAULTS=redis-flush`, on a Redis and a PostgreSQL of the run's own). It checks what must
 * hold at any speed: outside the fault's window every answer is one the mix expects, inside it only
 * a 503 with Retry-After is added; every account's charges reach the ledger (ledger = X-Credit-Cost
 * received), and every balance equals deposits − ledger.
 */
import { parseLoadConfig } from './config.ts';
import { holds } from './reconcile.ts';
import { runLoad } from './run.ts';

describe('npm run load (smoke: 6 s, 20 accounts, Redis flushed mid-mix)', () => {
  it('gives only expected answers outside the flush, 503 with Retry-After at most inside it, and money equal per account', async () => {
    const config = parseLoadConfig({
      LOAD_DURATION_S: '6',
      LOAD_ACCOUNTS: '20',
      LOAD_CONNECTIONS: '10',
      // The attack's queries pin a worker each on a shared 2-core CI machine: the smoke checks the mix.
      LOAD_ABUSE_ACCOUNTS: '0',
      LOAD_FAULTS: 'redis-flush',
      S3_ACCESS_KEY_ID: process.env.S3_ACCESS_KEY_ID,
      S3_SECRET_ACCESS_KEY: process.env.S3_SECRET_ACCESS_KEY,
    });

    const report = await runLoad(config);

    expect(report.requests).toBeGreaterThan(0);
    expect(report.ledger.charges).toBeGreaterThan(0);
    const [flush] = report.faults!.faults;
    expect(flush!.name).toBe('redis-flush');
    expect(Object.fromEntries(flush!.unexpected)).toEqual({});
    expect(Object.fromEntries(report.faults!.unexpectedOutside)).toEqual({});
    expect(report.unexpected).toBe(0);
    expect(report.invariants.filter((invariant) => !holds(invariant)).map((i) => [i.name, i.checked?.accountsOff])).toEqual([]);
    expect(report.ledger.netMicro).toBe(report.receivedMicro);
    expect(report.balances.apiOff).toEqual([]);
    expect(report.balances.adminOff).toEqual([]);
    expect(report.balances.creditCreated).toBe(0);
  }, 240_000);
});

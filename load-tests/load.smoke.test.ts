/**
 * CI smoke of `npm run load`: the same harness on the same topology (two APIs, two runners, real
 * PostgreSQL, Redis and S3 server), a few seconds over 20 accounts. It checks what must hold at any
 * speed: every answer is one the mix expects, and the ledger equals the X-Credit-Cost received.
 */
import { parseLoadConfig } from './config.ts';
import { runLoad } from './run.ts';

describe('npm run load (smoke: 5 s, 20 accounts)', () => {
  it('gives only expected answers and a ledger equal to the X-Credit-Cost received, in total and per account', async () => {
    const config = parseLoadConfig({
      LOAD_DURATION_S: '5',
      LOAD_ACCOUNTS: '20',
      LOAD_CONNECTIONS: '10',
      // The attack's queries pin a worker each on a shared 2-core CI machine: the smoke checks the mix.
      LOAD_ABUSE_ACCOUNTS: '0',
      LOAD_DATABASE_URL: process.env.TEST_DATABASE_URL,
      LOAD_REDIS_URL: process.env.TEST_REDIS_URL,
      S3_ENDPOINT: process.env.S3_ENDPOINT,
      S3_ACCESS_KEY_ID: process.env.S3_ACCESS_KEY_ID,
      S3_SECRET_ACCESS_KEY: process.env.S3_SECRET_ACCESS_KEY,
    });

    const report = await runLoad(config);

    expect(report.routes.flatMap((r) => r.samples)).toEqual([]);
    expect(report.unexpected).toBe(0);
    expect(report.requests).toBeGreaterThan(0);
    expect(report.ledger.charges).toBeGreaterThan(0);
    expect(report.ledger.netMicro).toBe(report.receivedMicro);
    expect(report.accountsOff).toEqual([]);
  }, 180_000);
});

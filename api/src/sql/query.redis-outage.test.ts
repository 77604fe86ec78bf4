/**
 * Redis stops while the service runs: SQL keeps answering on the runner's own locks and result
 * index, a re-read of a result made before the outage is still free, and nothing is charged twice.
 * How fast the answers come is printed by `npm run bench:redis-outage`, not asserted here.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { freePort } from '../../test/support/spawn.ts';
import { ledgerOf, openStack, type Stack } from '@uda/test-support/sql-stack';

let stack: Stack;
let redis: ChildProcess;
let redisUrl: string;
beforeAll(async () => {
  const port = await freePort();
  redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  redisUrl = `redis://127.0.0.1:${port}`;
  stack = await openStack('redisoutage', { runnerEnv: { REDIS_URL: redisUrl } });
}, 120_000);
afterAll(async () => {
  redis.kill('SIGKILL');
  await stack.close();
});

const post = (url: string, key: string, sql: string) =>
  fetch(`${url}/api/v1/query`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ sql }) });

describe('SQL during a Redis outage', () => {
  it('answers new queries and free re-reads after Redis stops, charging each query once', async () => {
    const api = await stack.start({ config: { REDIS_URL: redisUrl }, useOwnRedis: true });
    const { accountId, apiKey } = await api.account();
    const before = 'SELECT text_id, title FROM gutenberg ORDER BY text_id LIMIT 3';
    expect((await post(api.url, apiKey, before)).status).toBe(200);
    // Its charge is spent from the account's credit lease in Redis and written to the ledger by the
    // next flush (250 ms); a Redis that dies inside that interval loses it (docs/billing.md, "Redis
    // loss bound"). Redis dies after it here.
    for (let i = 0; i < 200 && !(await stack.ctx.db('ledger').where({ account_id: accountId, kind: 'charge' }).first()); i++) await new Promise((r) => setTimeout(r, 25));

    redis.kill('SIGKILL');
    await new Promise((resolve) => redis.once('exit', resolve));

    const reread = await fetch(`${api.url}/api/v1/query.csv?sql=${encodeURIComponent(before)}&token=${apiKey}`);
    expect(reread.status).toBe(200);
    expect(reread.headers.get('x-service-cached')).toBe('true');
    expect(reread.headers.get('x-credit-cost')).toBe('0');
    const csv = await reread.text();
    expect(csv.split('\n')[0]).toBe('text_id,title');
    expect(csv).toContain('\n3,');

    const during = 'SELECT text_id, title FROM gutenberg ORDER BY text_id LIMIT 2';
    const fresh = await post(api.url, apiKey, during);
    expect(fresh.status).toBe(200);
    const again = await post(api.url, apiKey, during);
    expect(again.status).toBe(200);
    expect(again.headers.get('x-service-cached')).toBe('true');
    expect((await ledgerOf(stack.ctx, accountId)).map((r) => r.kind)).toEqual(['charge', 'charge']);
    await api.close();
  });
});

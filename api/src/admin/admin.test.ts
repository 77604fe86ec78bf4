/**
 * The embedded default end to end: `startApi` with no DATABASE_URL and no REDIS_URL (PGlite and
 * in-process limiters), its demo key, the ops port, `npm run admin` commands against it, and its
 * billing's statements on PGlite.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseApiConfig } from '../config.ts';
import { type RunningApi, startApi } from '../main.ts';
import { runNode } from '../../test/support/spawn.ts';
import { readUsageLog } from '../../test/support/usage-log.ts';

let running: RunningApi;
let dataDir: string;
beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'uda-embedded-'));
  running = await startApi(
    parseApiConfig({ DATA_DIR: dataDir, PORT: '0', METRICS_PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent' }),
    { defaultMetrics: false },
  );
});
afterAll(async () => {
  await running.close();
});

const admin = async (...args: string[]) =>
  JSON.parse(await runNode(join(process.cwd(), 'api/src/admin/cli.ts'), args, { ADMIN_URL: running.adminUrl, DATA_DIR: dataDir, ADMIN_TOKEN: '' })) as Record<string, unknown>;

describe('embedded default and admin CLI', () => {
  it('prints a working Free demo key on first start', async () => {
    expect(running.services.limiterBackend.kind).toBe('memory');
    expect(running.demoKey).toMatch(/^service_[A-Za-z0-9]{40,}$/);
    const res = await fetch(`${running.url}/api/v1/auth/usage`, { headers: { authorization: `Bearer ${running.demoKey}` } });
    expect(await res.json()).toEqual({ account_state: 'authenticated', usage: { requests_remaining: 1000, request_limit: 1000 } });
    expect(res.headers.get('x-credits-remaining')).toBe('5');
  });

  it('serves /healthz, /readyz and /metrics on the ops port only', async () => {
    expect((await fetch(`${running.metricsUrl}/healthz`)).status).toBe(200);
    expect(await (await fetch(`${running.metricsUrl}/readyz`)).json()).toEqual({ status: 'ready' });
    await fetch(`${running.url}/api/v1/auth/usage`);
    await fetch(`${running.url}/nosuchsource/keywords`);
    const metrics = await (await fetch(`${running.metricsUrl}/metrics`)).text();
    expect(metrics).toContain('uda_http_request_duration_seconds_bucket{');
    expect(metrics).toContain('route="/api/v1/auth/usage",status_class="2xx"');
    // Lookups are labelled by their template, not "unmatched".
    expect(metrics).toContain('route="/{source}/{keywords}",status_class="4xx"');
    expect(metrics).toContain('uda_rate_limit_rejections_total');
    expect(metrics).toContain('uda_credits_charged_micro_usd_total');
    expect((await fetch(`${running.url}/metrics`)).status).toBe(404);
  });

  it('prints the usage for --help, -h and no command, exiting 0', async () => {
    for (const args of [['--help'], ['-h'], []]) {
      expect(await runNode(join(process.cwd(), 'api/src/admin/cli.ts'), args, { DATA_DIR: dataDir })).toContain('Usage: npm run admin -- <command>');
    }
  });

  it('listens on loopback unless HOST says otherwise', () => {
    expect(parseApiConfig({}).HOST).toBe('127.0.0.1');
  });

  it('rejects the admin API without the token', async () => {
    const res = await fetch(`${running.adminUrl}/admin/accounts/x`, { headers: { authorization: 'Bearer wrong' } });
    expect(res.status).toBe(401);
  });

  it('runs every admin command, printing one JSON object each (token read from DATA_DIR)', async () => {
    const created = await admin('account', 'create', '--email', 'ops@example.com', '--tier', 'developer');
    expect(created).toEqual({ account_id: expect.any(String), api_key: expect.stringMatching(/^service_/), tier: 'developer', balance_usd: 29 });
    const id = created.account_id as string;
    expect(await admin('account', 'show', '--account', id)).toEqual({ account_id: id, tier: 'developer', balance_usd: 29, grant_usd: 29, topoff_usd: 0 });
    expect(await admin('credits', 'topoff', '--account', id, '--usd', '2.5')).toMatchObject({ balance_usd: 31.5, topoff_usd: 2.5 });
    expect(await admin('credits', 'set', '--account', id, '--usd', '1')).toMatchObject({ balance_usd: 3.5, grant_usd: 1 });
    expect(await admin('account', 'tier', '--account', id, '--tier', 'pro')).toMatchObject({ tier: 'pro', grant_usd: 99 });
    const rotated = await admin('key', 'create', '--account', id, '--name', 'second');
    expect(rotated).toEqual({ api_key: expect.stringMatching(/^service_/) });
    const listed = (await admin('key', 'list', '--account', id)) as { keys: Record<string, unknown>[] };
    expect(listed.keys).toHaveLength(2);
    expect(Object.keys(listed.keys[0] ?? {})).toEqual(['name', 'prefix', 'status', 'last_used_at', 'created_at', 'legacy']);
    expect(listed.keys.map((k) => k.status).sort()).toEqual(['active', 'deactivated']);
    expect(await admin('key', 'revoke', '--account', id)).toEqual({ revoked: 1 });
    const old = await fetch(`${running.url}/api/v1/auth/usage`, { headers: { authorization: `Bearer ${rotated.api_key}` } });
    expect(((await old.json()) as { account_state: string }).account_state).toBe('anonymous');
  });

  it('approves a dashboard upgrade request with the CLI, once (embedded default: PGlite)', async () => {
    const signup = await fetch(`${running.url}/dashboard/api/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'pay@example.com', password: 'a long enough password' }),
    });
    expect(signup.status).toBe(201);
    const cookie = (signup.headers.getSetCookie()[0] ?? '').split(';')[0] as string;
    const session = (await (await fetch(`${running.url}/dashboard/api/session`, { headers: { cookie } })).json()) as { csrf_token: string };
    const asked = await fetch(`${running.url}/dashboard/api/payments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie, 'x-csrf-token': session.csrf_token },
      body: JSON.stringify({ kind: 'upgrade', tier: 'pro' }),
    });
    const { request } = (await asked.json()) as { request: { id: string; account_id: string } };
    expect(await admin('payments', 'list')).toEqual({ pending: [expect.objectContaining({ id: request.id, kind: 'upgrade', tier: 'pro', status: 'pending' })] });
    expect(await admin('payments', 'approve', '--request', request.id)).toMatchObject({ request: { status: 'approved' }, account: { tier: 'pro', grant_usd: 99 } });
    // A second approval changes nothing: the CLI exits non-zero with the admin API's 404.
    await expect(admin('payments', 'approve', '--request', request.id)).rejects.toThrow(`No pending payment request ${request.id}.`);
    expect(await admin('payments', 'list')).toEqual({ pending: [] });
  });

  it('charges on PGlite through the same single-statement ledger', async () => {
    const { accounts, ledger } = running.services;
    const account = await accounts.create({ email: 'pglite@example.com', tier: 'free' });
    await accounts.setGrant(account.id, 10);
    const results = await Promise.all(
      Array.from({ length: 5 }, (_, i) => ledger.charge({ accountId: account.id, amountMicro: 3, idempotencyKey: `pg-${account.id}-${i}` })),
    );
    expect(results.filter((r) => r.ok).length).toBe(3);
    expect(await accounts.balance(account.id)).toBe(1);
  });

  it("writes a lookup's charge and its usage record on PGlite, through the outbox to the usage log's file", async () => {
    const { accounts, billing, store } = running.services;
    const account = await accounts.create({ email: 'pglite-usage@example.com', tier: 'free' });
    await billing.deliverOnce({ accountId: account.id, tier: account.tier }, { costMicro: 7 });
    await billing.flush();
    await billing.storeUsage();
    expect((await readUsageLog(store, '')).filter((r) => r.account_id === account.id)).toEqual([expect.objectContaining({ cost_micro: 7, forgiven: false })]);
  });
});

import { Agent, request } from 'node:http';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { pino } from 'pino';
import { type TestContext, openTestContext } from '@uda/test-support/api-harness';
import { testRoutes } from '../../../test/support/test-routes.ts';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await openTestContext();
});
afterAll(async () => {
  await ctx.close();
});

/** A GET through `agent` (one keep-alive socket): the answer's account state, and whether the socket was reused. */
function getOn(agent: Agent, url: string, key: string): Promise<{ reused: boolean; state: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, headers: { authorization: `Bearer ${key}` } }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ reused: req.reusedSocket, state: (JSON.parse(body) as { account_state: string }).account_state }));
    });
    req.on('error', reject);
    req.end();
  });
}

const state = async (res: Response) => ((await res.json()) as { account_state: string }).account_state;

describe('authentication', () => {
  it('accepts a Bearer header everywhere, and ?token= only on the routes SPEC Authentication §2 lists', async () => {
    const api = await ctx.start({ extraRoutes: testRoutes });
    const { apiKey } = await api.account();
    expect(await state(await api.get('/test/header-only', { key: apiKey }))).toBe('authenticated');
    expect(await state(await api.get(`/test/header-only?token=${apiKey}`))).toBe('anonymous');
    expect(await state(await api.get(`/test/lookup/x?token=${apiKey}`))).toBe('authenticated');
    expect(await state(await api.get(`/api/v1/auth/usage?token=${apiKey}`))).toBe('anonymous');
    await api.close();
  });

  it('never logs a key sent under an encoded or bracketed token name: accepted and redacted, or refused', async () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk: Buffer, _enc, done) => void (lines.push(chunk.toString()), done()) });
    const api = await ctx.start({ extraRoutes: testRoutes, logger: pino({ level: 'info' }, sink) });
    const { apiKey } = await api.account();
    const key = encodeURIComponent(apiKey);
    const accepted = [`token=${key}`, `%74oken=${key}`, `to%6Ben=${key}`];
    const refused = [`token[]=${key}`, `token[0]=${key}`, `TOKEN=${key}`, `token=${key}&token=${key}`, `%74oken=${key}&token=${key}`];
    for (const query of accepted) expect(await state(await api.get(`/test/lookup/x?${query}`))).toBe('authenticated');
    for (const query of refused) expect(await state(await api.get(`/test/lookup/x?${query}`))).toBe('anonymous');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const logged = lines.filter((line) => line.includes('"request"'));
    expect(logged).toHaveLength(accepted.length + refused.length);
    const log = lines.join('');
    expect(log).not.toContain(apiKey);
    expect(log).not.toContain(key);
    expect(log).not.toContain(apiKey.slice(8));
    expect(log).toContain('%74oken=[redacted]');
    expect(log).toContain('token[]=[redacted]');
    await api.close();
  });

  it('treats invalid, revoked and deactivated keys as no key', async () => {
    const api = await ctx.start({ extraRoutes: testRoutes });
    const { accountId, apiKey: first } = await api.account();
    expect(await state(await api.get('/test/lookup/x', { key: `${first.slice(0, -1)}0` }))).toBe('anonymous');
    expect(await state(await api.get('/test/lookup/x', { key: 'garbage' }))).toBe('anonymous');
    // Rotation: the new key works, the old one is deactivated in the same transaction.
    const second = await api.services.keys.create(accountId, 'rotated');
    expect(await state(await api.get('/test/lookup/x', { key: first }))).toBe('anonymous');
    expect(await state(await api.get('/test/lookup/x', { key: second }))).toBe('authenticated');
    const listed = await api.services.keys.list(accountId);
    expect(listed.map((k) => k.status).sort()).toEqual(['active', 'deactivated']);
    // Revocation: anonymous on lookups, 401 on key-required routes.
    await api.services.keys.revoke(accountId);
    expect(await state(await api.get('/test/lookup/x', { key: second }))).toBe('anonymous');
    expect((await api.get('/test/export', { key: second })).status).toBe(401);
    await api.close();
  });

  it('answers each key a keep-alive connection sends for that key, when the connection changes keys', async () => {
    const api = await ctx.start({ extraRoutes: testRoutes });
    const { apiKey } = await api.account();
    // Well shaped, never issued: the connection's remembered hash must not answer for it.
    const unknown = `${apiKey.slice(0, -4)}${apiKey.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`;
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const sent: { key: string; reused: boolean; state: string }[] = [];
    for (const key of [apiKey, unknown, apiKey, apiKey, unknown, unknown, apiKey]) {
      sent.push({ key, ...(await getOn(agent, `${api.url}/test/header-only`, key)) });
    }
    agent.destroy();
    expect(sent.slice(1).every((s) => s.reused)).toBe(true);
    expect(sent.map((s) => s.state)).toEqual(sent.map((s) => (s.key === apiKey ? 'authenticated' : 'anonymous')));
    await api.close();
  });

  it('allows at most one active key per account at the database level', async () => {
    const api = await ctx.start();
    const { accountId } = await api.account();
    const row = await ctx.db('api_keys').where({ account_id: accountId, status: 'active' }).first();
    await expect(ctx.db('api_keys').insert({ ...row, id: crypto.randomUUID(), lookup_hash: 'other' })).rejects.toThrow(/api_keys_one_active/);
    await api.close();
  });

  it('accepts legacy dk_ keys, listed as legacy', async () => {
    const api = await ctx.start({ extraRoutes: testRoutes });
    const { accountId } = await api.account();
    const legacy = 'dk_LegacyKey0123456789abcdef';
    await api.services.keys.importLegacy(accountId, 'old', legacy);
    expect(await state(await api.get('/test/lookup/x', { key: legacy }))).toBe('authenticated');
    const listed = await api.services.keys.list(accountId);
    expect(listed.find((k) => k.status === 'active')).toMatchObject({ name: 'old', prefix: 'dk_Lega', legacy: true });
    await api.close();
  });

  it('records last_used_at in batched writes, at most once a minute', async () => {
    const api = await ctx.start({ extraRoutes: testRoutes });
    const { accountId, apiKey } = await api.account();
    await api.get('/test/header-only', { key: apiKey });
    await api.services.keys.flushUsage();
    const firstUse = (await api.services.keys.list(accountId))[0]?.last_used_at;
    expect(firstUse).toBeTruthy();
    await api.get('/test/header-only', { key: apiKey });
    await api.services.keys.flushUsage();
    expect((await api.services.keys.list(accountId))[0]?.last_used_at).toBe(firstUse);
    await api.close();
  });

  it('writes the last uses when the service closes (the SIGTERM drain)', async () => {
    const api = await ctx.start({ extraRoutes: testRoutes });
    const { accountId, apiKey } = await api.account();
    await api.get('/test/header-only', { key: apiKey });
    await api.close();
    const [row] = await ctx.db('api_keys').where({ account_id: accountId }).select('last_used_at');
    expect(row?.last_used_at).toBeTruthy();
  });
});

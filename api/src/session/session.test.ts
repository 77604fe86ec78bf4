/**
 * The dashboard's session routes over real HTTP, PostgreSQL and Redis: sign-up makes a Free account
 * and an httpOnly SameSite cookie, sign-in rotates the session, CSRF is required on every change,
 * sign-in is rate-limited, sign-out ends the session server-side, the session routes ignore API
 * keys and the API routes ignore the cookie, and Reveal asks for the password on an old session.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type TestApi, type TestContext, openTestContext } from '@uda/test-support/api-harness';
import { MONTHLY_GRANT_MICRO_USD } from '../prices.ts';
import { PAYMENT_LIMITS } from '../accounts/quotas.ts';
import { OperatorApprovalPayments } from './payments/payments.ts';
import { usageAnswerSchema } from './usage/usage-schema.ts';
import { SIGNIN_LIMITS } from './auth/signin-limit.ts';

let ctx: TestContext;
let api: TestApi;
beforeAll(async () => {
  ctx = await openTestContext();
  api = await ctx.start();
});
afterAll(() => ctx.close());

const PASSWORD = 'correct horse battery';
let n = 0;
const freshEmail = () => `user${++n}-${Date.now()}@example.com`;

interface Browser {
  cookie: string;
  csrf: string;
}

function cookieOf(res: Response): string {
  const header = res.headers.getSetCookie().find((c) => c.startsWith('uda_session='));
  if (!header) throw new Error('no session cookie');
  return header.split(';')[0] as string;
}

async function post(path: string, body: unknown, browser?: Partial<Browser>, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${api.url}/dashboard/api${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(browser?.cookie ? { cookie: browser.cookie } : {}),
      ...(browser?.csrf ? { 'x-csrf-token': browser.csrf } : {}),
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

async function get(path: string, browser?: Partial<Browser>, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${api.url}/dashboard/api${path}`, { headers: { ...(browser?.cookie ? { cookie: browser.cookie } : {}), ...headers } });
}

async function signUp(email = freshEmail()): Promise<Browser & { email: string }> {
  const res = await post('/signup', { email, password: PASSWORD });
  expect(res.status).toBe(201);
  const cookie = cookieOf(res);
  const session = (await (await get('/session', { cookie })).json()) as { csrf_token: string };
  return { email, cookie, csrf: session.csrf_token };
}

describe('sign-up', () => {
  it('creates a Free account with its monthly grant and sets an httpOnly, SameSite, path-scoped cookie', async () => {
    const res = await post('/signup', { email: freshEmail(), password: PASSWORD });
    expect(res.status).toBe(201);
    const header = res.headers.getSetCookie().find((c) => c.startsWith('uda_session=')) ?? '';
    expect(header).toMatch(/; HttpOnly/);
    expect(header).toMatch(/; SameSite=Strict/);
    expect(header).toMatch(/; Path=\/dashboard/);
    expect(header).not.toMatch(/Secure/);
    // The answer is the one wire shape the dashboard's type is inferred from.
    const usage = usageAnswerSchema.parse(await (await get('/usage', { cookie: cookieOf(res) })).json());
    expect(usage).toMatchObject({ tier: 'free', balance_micro: MONTHLY_GRANT_MICRO_USD.free });
  });

  it('marks the cookie Secure when the request came over HTTPS through the trusted proxy', async () => {
    const proxied = await ctx.start({ config: { TRUST_PROXY_HOPS: '1' } });
    try {
      const res = await fetch(`${proxied.url}/dashboard/api/signup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-proto': 'https' },
        body: JSON.stringify({ email: freshEmail(), password: PASSWORD }),
      });
      expect(res.status).toBe(201);
      expect(res.headers.getSetCookie().find((c) => c.startsWith('uda_session='))).toMatch(/; Secure/);
    } finally {
      await proxied.close();
    }
  });

  it('refuses a taken email (any case) with 409 and a short password with 400', async () => {
    const { email } = await signUp();
    expect((await post('/signup', { email: email.toUpperCase(), password: PASSWORD })).status).toBe(409);
    const short = await post('/signup', { email: freshEmail(), password: 'short' });
    expect(short.status).toBe(400);
    expect(await short.json()).toMatchObject({ status: 'error', message: expect.stringContaining('at least 10') });
  });

  it('stores the password as scrypt and the session id only as its SHA-256', async () => {
    const { email, cookie } = await signUp();
    const user = await ctx.db('dashboard_users').where({ email }).first();
    expect(user.password_hash).toMatch(/^scrypt\$16384\$8\$1\$/);
    expect(user.password_hash).not.toContain(PASSWORD);
    const id = cookie.split('=')[1] as string;
    const rows = await ctx.db('dashboard_sessions').where({ user_id: user.id }).select('id_hash');
    expect(rows).toEqual([{ id_hash: createHash('sha256').update(id).digest('hex') }]);
  });
});

describe('sign-in and sign-out', () => {
  it('rotates the session id at sign-in and ends the old one', async () => {
    const first = await signUp();
    const res = await post('/signin', { email: first.email, password: PASSWORD }, { cookie: first.cookie });
    expect(res.status).toBe(200);
    const second = cookieOf(res);
    expect(second).not.toBe(first.cookie);
    expect((await get('/session', { cookie: first.cookie })).status).toBe(401);
    expect((await get('/session', { cookie: second })).status).toBe(200);
  });

  it('answers one 401 for a wrong password and for an unknown email', async () => {
    const { email } = await signUp();
    const wrong = await post('/signin', { email, password: 'not the password' });
    const unknown = await post('/signin', { email: freshEmail(), password: PASSWORD });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(await wrong.json()).toEqual(await unknown.json());
  });

  // Each of these starts its own API (own limiter prefix) behind one trusted proxy hop, so it can
  // send from many addresses with X-Forwarded-For and keeps this file's shared API's budgets.
  const fromAddress = (url: string, address: string) => (path: string, body: unknown) =>
    fetch(`${url}/dashboard/api${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': address },
      body: JSON.stringify(body),
    });
  const withProxiedApi = async (run: (url: string) => Promise<void>) => {
    const own = await ctx.start({ config: { TRUST_PROXY_HOPS: '1' } });
    try {
      await run(own.url);
    } finally {
      await own.close();
    }
  };

  it('wrong passwords from rotating addresses never lock the owner out: the right password from a clean address signs in', async () => {
    await withProxiedApi(async (url) => {
      const { email } = await signUp();
      for (let i = 0; i < SIGNIN_LIMITS.perEmailAddress.points + 2; i++) {
        expect((await fromAddress(url, `198.51.100.${i + 1}`)('/signin', { email, password: 'wrong password' })).status).toBe(401);
      }
      expect((await fromAddress(url, '203.0.113.7')('/signin', { email, password: PASSWORD })).status).toBe(200);
    });
  });

  it("sign-ups with someone's email, from any addresses, never count against that email's sign-in", async () => {
    await withProxiedApi(async (url) => {
      const { email } = await signUp();
      for (let i = 0; i < SIGNIN_LIMITS.perEmailAddress.points + 2; i++) {
        expect((await fromAddress(url, i % 2 ? '198.51.100.9' : `198.51.100.${i + 20}`)('/signup', { email, password: PASSWORD })).status).toBe(409);
      }
      expect((await fromAddress(url, '198.51.100.9')('/signin', { email, password: PASSWORD })).status).toBe(200);
    });
  });

  it('refuses an address with a 429 and Retry-After once it has failed too often for one email, even with the right password', async () => {
    await withProxiedApi(async (url) => {
      const { email } = await signUp();
      const attacker = fromAddress(url, '198.51.100.66');
      for (let i = 0; i < SIGNIN_LIMITS.perEmailAddress.points; i++) expect((await attacker('/signin', { email, password: 'wrong password' })).status).toBe(401);
      const limited = await attacker('/signin', { email, password: PASSWORD });
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await limited.json()).toMatchObject({ code: 'SIGNIN_RATE_LIMITED' });
      expect((await fromAddress(url, '203.0.113.8')('/signin', { email, password: PASSWORD })).status).toBe(200);
    });
  });

  it('limits failed sign-ins per address across emails', async () => {
    await withProxiedApi(async (url) => {
      const attacker = fromAddress(url, '198.51.100.77');
      let last = 0;
      for (let i = 0; i <= SIGNIN_LIMITS.perAddress.points; i++) last = (await attacker('/signin', { email: freshEmail(), password: PASSWORD })).status;
      expect(last).toBe(429);
      const { email } = await signUp();
      expect((await fromAddress(url, '198.51.100.78')('/signin', { email, password: PASSWORD })).status).toBe(200);
    });
  });

  it('successful sign-ins never spend an address budget', async () => {
    await withProxiedApi(async (url) => {
      const { email } = await signUp();
      const office = fromAddress(url, '198.51.100.90');
      for (let i = 0; i <= SIGNIN_LIMITS.perAddress.points; i++) expect((await office('/signin', { email, password: PASSWORD })).status).toBe(200);
    });
  });

  it('sign-out deletes the session server-side: the old cookie no longer works', async () => {
    const browser = await signUp();
    const res = await post('/signout', {}, browser);
    expect(res.status).toBe(200);
    expect(res.headers.getSetCookie().find((c) => c.startsWith('uda_session='))).toMatch(/Max-Age=0/);
    expect((await get('/keys', browser)).status).toBe(401);
  });
});

describe('CSRF and the boundary between session and API routes', () => {
  it('refuses every state-changing route without the CSRF token, or with a wrong one', async () => {
    const browser = await signUp();
    for (const path of ['/keys', '/keys/revoke', '/keys/replace', '/keys/reveal', '/signout', '/payments', '/query']) {
      const missing = await post(path, { name: 'x' }, { cookie: browser.cookie });
      expect({ path, status: missing.status }).toEqual({ path, status: 403 });
      const wrong = await post(path, { name: 'x' }, { cookie: browser.cookie, csrf: browser.csrf.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')) });
      expect({ path, status: wrong.status }).toEqual({ path, status: 403 });
    }
    expect((await get('/keys', browser)).status).toBe(200);
    expect(((await (await get('/keys', browser)).json()) as { keys: unknown[] }).keys).toEqual([]);
  });

  it('gives other origins no CORS access to the session routes, so no page elsewhere can read the CSRF token', async () => {
    const browser = await signUp();
    const read = await get('/session', browser, { origin: 'https://elsewhere.example' });
    expect(read.headers.get('access-control-allow-origin')).toBeNull();
    const preflight = await fetch(`${api.url}/dashboard/api/keys`, {
      method: 'OPTIONS',
      headers: { origin: 'https://elsewhere.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-csrf-token' },
    });
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    expect(preflight.headers.get('access-control-allow-headers')).toBeNull();
  });

  it('session routes never accept an API key, and API routes never accept the session cookie', async () => {
    const { apiKey } = await api.account();
    expect((await get('/keys', {}, { authorization: `Bearer ${apiKey}` })).status).toBe(401);
    const browser = await signUp();
    const created = await post('/keys', { name: 'mine' }, browser);
    expect(created.status).toBe(201);
    const sql = await fetch(`${api.url}/api/v1/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: browser.cookie, 'x-csrf-token': browser.csrf },
      body: JSON.stringify({ sql: 'SELECT 1' }),
    });
    expect(sql.status).toBe(401);
  });
});

describe('paths under /dashboard', () => {
  it('an unknown dashboard path is a 404, never a lookup', async () => {
    for (const path of ['/dashboard/api/nope', '/dashboard/nope']) {
      const res = await fetch(`${api.url}${path}`, { method: 'POST' });
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
    }
  });
});

describe('keys through the session', () => {
  it('create, reveal, replace and revoke: only the newest key resolves, and after revoke none does', async () => {
    const browser = await signUp();
    const first = ((await (await post('/keys', { name: 'laptop' }, browser)).json()) as { key: string }).key;
    expect(first).toMatch(/^service_[A-Za-z0-9]{40,}$/);
    expect(((await (await post('/keys/reveal', {}, browser)).json()) as { key: string }).key).toBe(first);
    const second = ((await (await post('/keys/replace', {}, browser)).json()) as { key: string }).key;
    expect(second).not.toBe(first);
    expect(await api.services.keys.resolve(first)).toBeUndefined();
    expect(await api.services.keys.resolve(second)).toBeDefined();
    const list = ((await (await get('/keys', browser)).json()) as { keys: { name: string; status: string }[] }).keys;
    expect(list.map((k) => [k.name, k.status])).toEqual([
      ['laptop', 'active'],
      ['laptop', 'deactivated'],
    ]);
    expect((await post('/keys/revoke', {}, browser)).status).toBe(200);
    expect(await api.services.keys.resolve(second)).toBeUndefined();
  });

  it('Reveal asks for the password again once the session is a few minutes old', async () => {
    const browser = await signUp();
    await post('/keys', { name: 'k' }, browser);
    await ctx.db('dashboard_sessions').update({ authenticated_at: new Date(Date.now() - 10 * 60 * 1000) });
    const asked = await post('/keys/reveal', {}, browser);
    expect(asked.status).toBe(401);
    expect(await asked.json()).toMatchObject({ code: 'REAUTH_REQUIRED' });
    expect((await post('/keys/reveal', { password: 'wrong password' }, browser)).status).toBe(401);
    const revealed = await post('/keys/reveal', { password: PASSWORD }, browser);
    expect(revealed.status).toBe(200);
    expect((await post('/keys/reveal', {}, browser)).status).toBe(200);
  });
});

describe('usage and the ledger', () => {
  it('shows charges and refunds newest first, paged, and spend per day per source net of refunds', async () => {
    const browser = await signUp();
    const session = (await (await get('/session', browser)).json()) as { email: string };
    const user = await ctx.db('dashboard_users').where({ email: session.email }).first('account_id');
    const accountId = user.account_id as string;
    const item = (source: string, rows: number, costPerRowMicro: number) => ({ source, rows, costPerRowMicro, costMicro: rows * costPerRowMicro });
    for (let i = 0; i < 21; i++) {
      await api.services.ledger.charge({ accountId, amountMicro: 5_000, idempotencyKey: `t:${accountId}:${i}`, breakdown: [item('gutenberg', 1, 5_000)] });
    }
    await api.services.ledger.charge({ accountId, amountMicro: 75_000, idempotencyKey: `t:${accountId}:wiki`, breakdown: [item('wiki', 3, 25_000)] });
    await api.services.ledger.refund(`t:${accountId}:wiki`);
    const first = (await (await get('/ledger?page=0', browser)).json()) as { entries: { kind: string; amount_micro: number }[]; has_more: boolean };
    expect(first.entries).toHaveLength(20);
    expect(first.entries[0]).toMatchObject({ kind: 'refund', amount_micro: -75_000 });
    expect(first.entries[1]).toMatchObject({ kind: 'charge', amount_micro: 75_000 });
    expect(first.has_more).toBe(true);
    const second = (await (await get('/ledger?page=1', browser)).json()) as { entries: unknown[]; has_more: boolean };
    expect(second).toMatchObject({ has_more: false });
    expect(second.entries).toHaveLength(3);
    const usage = (await (await get('/usage', browser)).json()) as { spend_by_day: { source: string; cost_micro: number }[]; balance_micro: number };
    const bySource: Record<string, number> = {};
    for (const d of usage.spend_by_day) bySource[d.source] = (bySource[d.source] ?? 0) + d.cost_micro;
    expect(bySource).toEqual({ gutenberg: 21 * 5_000, wiki: 0 });
    expect(usage.balance_micro).toBe(MONTHLY_GRANT_MICRO_USD.free - 21 * 5_000);
  });
});

describe('payment requests', () => {
  it('records upgrade and top-off requests that change nothing until an operator approves them, once', async () => {
    const browser = await signUp();
    const upgrade = (await (await post('/payments', { kind: 'upgrade', tier: 'developer' }, browser)).json()) as { request: { id: string } };
    const topoff = (await (await post('/payments', { kind: 'topoff', amount_usd: '12.50' }, browser)).json()) as { request: { id: string } };
    const usage = async () => (await (await get('/usage', browser)).json()) as { tier: string; topoff_micro: number };
    expect(await usage()).toMatchObject({ tier: 'free', topoff_micro: 0 });
    const payments = new OperatorApprovalPayments(ctx.db, api.services.accounts);
    expect(await payments.approve(upgrade.request.id)).toMatchObject({ status: 'approved' });
    expect(await payments.approve(topoff.request.id)).toMatchObject({ status: 'approved' });
    expect(await payments.approve(topoff.request.id)).toBeUndefined();
    expect(await usage()).toMatchObject({ tier: 'developer', topoff_micro: 12_500_000 });
    expect((await post('/payments', { kind: 'topoff', amount_usd: '-5' }, browser)).status).toBe(400);
  });

  it('refuses a top-off under the minimum or over the maximum with 400, and nothing is recorded', async () => {
    const browser = await signUp();
    for (const amount_usd of ['0.00', '4.99', '1000.01']) {
      const res = await post('/payments', { kind: 'topoff', amount_usd }, browser);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { message: string }).message).toMatch(/between 5 and 1,000 USD/);
    }
    expect((await post('/payments', { kind: 'topoff', amount_usd: '5' }, browser)).status).toBe(201);
    expect((await post('/payments', { kind: 'topoff', amount_usd: '1000' }, browser)).status).toBe(201);
    const list = (await (await get('/payments', browser)).json()) as { requests: unknown[] };
    expect(list.requests).toHaveLength(2);
  });

  it('allows a few pending requests per account, even asked at once; a decision frees a place', async () => {
    const browser = await signUp();
    const asks = Array.from({ length: PAYMENT_LIMITS.pendingPerAccount + 3 }, () => post('/payments', { kind: 'topoff', amount_usd: '10' }, browser));
    const answers = await Promise.all(asks);
    const created = answers.filter((r) => r.status === 201);
    expect(created).toHaveLength(PAYMENT_LIMITS.pendingPerAccount);
    const refused = answers.find((r) => r.status !== 201);
    expect(refused?.status).toBe(409);
    expect(await refused?.json()).toMatchObject({ status: 'error', code: 'PAYMENTS_PENDING' });
    const first = ((await created[0]!.json()) as { request: { id: string } }).request.id;
    await new OperatorApprovalPayments(ctx.db, api.services.accounts).reject(first);
    expect((await post('/payments', { kind: 'upgrade', tier: 'pro' }, browser)).status).toBe(201);
    expect((await post('/payments', { kind: 'upgrade', tier: 'pro' }, browser)).status).toBe(409);
  });
});

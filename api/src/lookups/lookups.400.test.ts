/**
 * Input checks, unsupported sources, the anonymous allowance and key handling of the lookup routes
 * (SPEC "GET /{source}/{keywords}", Authentication §2, Limits). Live lookups go to loopback stack.fakes.
 */
import { describe, expect, it } from '@jest/globals';
import { sourceNames } from '@uda/shared/catalog';
import { useLiveStack } from '../../test/support/stacks.ts';

const stack = useLiveStack();

const start = (limits = {}) => stack.ctx.start({ config: stack.fakes.config, limits });

async function expect400(res: Response, message: string | RegExp): Promise<void> {
  expect(res.status).toBe(400);
  const body = (await res.json()) as { status: string; account_state: string; data: { error: string; code?: string } };
  expect(body).toEqual({ status: 'error', account_state: 'anonymous', data: { error: expect.stringMatching(message) } });
}

describe('GET /{source}/{keywords}: 400', () => {
  it('names every valid source and alias when the source is unsupported', async () => {
    const api = await start();
    const res = await api.get('/nope/anything');
    expect(res.status).toBe(400);
    const { data } = (await res.json()) as { data: { error: string } };
    expect(data.error).toMatch(/^Unsupported source "nope"\./);
    for (const name of sourceNames()) expect(data.error).toContain(name);
    await api.close();
  });

  it('explains keywords that are not UTF-8, hold control characters, are blank or too long', async () => {
    const api = await start();
    await expect400(await api.get('/books/%FF%FE'), /URL-encoded UTF-8/);
    await expect400(await api.get('/books/a%00b'), /control characters/);
    await expect400(await api.get('/books/line%0Abreak'), /control characters/);
    await expect400(await api.get('/books/%20%20'), /must not be empty/);
    await expect400(await api.get(`/books/${'a'.repeat(201)}`), /at most 200 characters/);
    await api.close();
  });

  it('accepts limit from 1 to 50 only', async () => {
    const api = await start();
    for (const limit of ['0', '51', 'ten', '1.5', '-1']) await expect400(await api.get(`/wiki/x?limit=${limit}`), /limit must be a whole number from 1 to 50/);
    await api.close();
  });

  it('accepts only https Wikipedia article URLs on /https:/…', async () => {
    const api = await start();
    await expect400(await api.get('/https:/example.com/wiki/Ayrton_Senna'), /wikipedia\.org\/wiki/);
    await expect400(await api.get('/https:/en.wikipedia.org/w/index.php'), /wikipedia\.org\/wiki/);
    await api.close();
  });

  it('leaves longer unknown paths and /api/… to the plain 404', async () => {
    const api = await start();
    for (const path of ['/no/such/path', '/api/nothing']) {
      const res = await api.get(path);
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ error: 'Not Found', message: `Cannot GET ${path}` });
    }
    await api.close();
  });
});

describe('GET /{source}/{keywords}: anonymous allowance and keys', () => {
  it('counts only successes toward the anonymous allowance, with X-RateLimit-* on every answer', async () => {
    const api = await start({ anonymous: { points: 2, windowS: 86_400 } });
    for (const path of ['/nope/x', '/books/%FF', '/wiki/x?limit=0']) {
      const res = await api.get(path);
      expect(res.status).toBe(400);
      expect(res.headers.get('x-ratelimit-limit')).toBe('2');
    }
    stack.fakes.arxiv.mode = 'empty';
    expect((await api.get('/arxiv/nothing%20at%20all')).status).toBe(404);
    stack.fakes.arxiv.mode = 'ok';
    const first = await api.get('/wikipedia/counter%20strike');
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-remaining')).toBe('1');
    expect(first.headers.get('x-credit-cost')).toBeNull();
    expect((await api.get('/wiki/counter%20strike')).status).toBe(200);
    const refused = await api.get('/wiki/counter%20strike');
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ error: 'REQUEST_LIMIT_EXCEEDED', account_state: 'anonymous', limit: 2, remaining: 0 });
    await api.close();
  });

  it('accepts the key as ?token= and treats an invalid key as anonymous', async () => {
    const api = await start();
    const { apiKey } = await api.account();
    const viaToken = await api.get(`/wiki/counter%20strike?limit=2&token=${apiKey}`);
    expect(viaToken.status).toBe(200);
    expect(((await viaToken.json()) as { account_state: string }).account_state).toBe('authenticated');
    expect(viaToken.headers.get('x-credit-cost')).toBe('0.05');
    const invalid = await api.get('/wiki/counter%20strike?limit=2', { key: 'service_not_a_real_key_0000000000000000000000000' });
    expect(invalid.status).toBe(200);
    expect(((await invalid.json()) as { account_state: string }).account_state).toBe('anonymous');
    await api.close();
  });

  it('answers 402 up front at zero balance, in the lookup envelope', async () => {
    const api = await start();
    const { apiKey } = await api.account({ usd: '0' });
    const res = await api.get('/wiki/counter%20strike', { key: apiKey });
    expect(res.status).toBe(402);
    expect(await res.json()).toMatchObject({ status: 'error', account_state: 'authenticated', data: { code: 'INSUFFICIENT_CREDIT' } });
    await api.close();
  });
});

/**
 * Verified sign-up and password reset by email (DECISIONS §5 "Email") over real HTTP, PostgreSQL,
 * Redis and a real SMTP server started here: a self-serve account's key makes lookups at once but
 * gets 403 EMAIL_NOT_VERIFIED on SQL, exports and sheet uploads until the link in its email is
 * followed; links are single-use, expire, are stored hashed and refuse forgeries with a 400;
 * resends and reset requests are limited (429 with Retry-After); a reset request answers alike for
 * any email; a reset ends every session. Without SMTP_URL the message lands in DATA_DIR/outbox.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { simpleParser } from 'mailparser';
import { pino } from 'pino';
import { type TestApi, type TestContext, openTestContext } from '@uda/test-support/api-harness';
import { type ReceivedMail, type TestSmtp, startTestSmtp } from '@uda/test-support/smtp';
import { form } from '../../../test/support/sheets-client.ts';
import { EMAIL_LIMITS } from './email-limit.ts';

let ctx: TestContext;
let smtp: TestSmtp;
let api: TestApi;
beforeAll(async () => {
  ctx = await openTestContext();
  smtp = await startTestSmtp();
  api = await ctx.start({ config: { SMTP_URL: smtp.url, MAIL_FROM: 'Data API <no-reply@data.example>' } });
});
afterAll(async () => {
  await ctx.close();
  await smtp.close();
});

const PASSWORD = 'correct horse battery';
let n = 0;
const freshEmail = () => `mail${++n}-${Date.now()}@example.com`;

interface Browser {
  email: string;
  cookie: string;
  csrf: string;
}

const cookieOf = (res: Response) => (res.headers.getSetCookie().find((c) => c.startsWith('uda_session=')) ?? '').split(';')[0] as string;

function call(path: string, body?: unknown, browser?: Partial<Browser>, base = api.url, address?: string): Promise<Response> {
  return fetch(`${base}/dashboard/api${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      'content-type': 'application/json',
      ...(browser?.cookie ? { cookie: browser.cookie } : {}),
      ...(browser?.csrf ? { 'x-csrf-token': browser.csrf } : {}),
      ...(address ? { 'x-forwarded-for': address } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function signUp(base = api.url, address?: string): Promise<Browser> {
  const email = freshEmail();
  const res = await call('/signup', { email, password: PASSWORD }, undefined, base, address);
  expect(res.status).toBe(201);
  const cookie = cookieOf(res);
  const session = (await (await call('/session', undefined, { cookie }, base)).json()) as { csrf_token: string };
  return { email, cookie, csrf: session.csrf_token };
}

/** The token in a link, as the dashboard page reads it from the fragment. */
function tokenOf(mail: ReceivedMail, kind: 'verify' | 'reset'): string {
  const match = new RegExp(`^${api.url}/dashboard/#/${kind}/([A-Za-z0-9_-]+)$`).exec(mail.link ?? '');
  if (!match) throw new Error(`no ${kind} link in: ${mail.text}`);
  return match[1] as string;
}

const sql = (key: string) => api.get('/api/v1/query', { method: 'POST', key, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sql: 'DELETE FROM gutenberg' }) });
const exportFile = (key: string) => api.get('/api/v1/export/service.db', { key });
const uploadSheet = (key: string) => api.get('/api/v1/datasets', { method: 'POST', key, body: form({ content: 'a\n1\n', fileName: 'a.csv' }) });
const codeOf = async (res: Response) => ((await res.json()) as { code?: string }).code;

describe('verified sign-up', () => {
  it('a new account\'s key makes lookups at once; SQL, exports and sheet uploads answer 403 until the emailed link is followed', async () => {
    const browser = await signUp();
    const mail = await smtp.next(browser.email);
    expect(mail).toMatchObject({ subject: 'Verify your email for the Unified Data API', from: expect.stringContaining('no-reply@data.example') });
    expect(((await (await call('/session', undefined, browser)).json()) as { email_verified: boolean }).email_verified).toBe(false);
    const key = ((await (await call('/keys', { name: 'k' }, browser)).json()) as { key: string }).key;

    const lookup = await api.get('/books/the%20art%20of%20war', { key });
    expect(((await lookup.json()) as { account_state: string }).account_state).toBe('authenticated');
    for (const refused of [await sql(key), await exportFile(key), await uploadSheet(key), await call('/query', { sql: 'SELECT 1' }, browser)]) {
      expect(refused.status).toBe(403);
      expect(await refused.json()).toEqual({ status: 'error', code: 'EMAIL_NOT_VERIFIED', message: expect.stringContaining('Verify your email first') });
    }

    const verified = await call('/email/verify', { token: tokenOf(mail, 'verify') });
    expect(verified.status).toBe(200);
    expect(((await (await call('/session', undefined, browser)).json()) as { email_verified: boolean }).email_verified).toBe(true);
    // The same key, at once: past the gate to the SQL validator, the export store and the upload.
    expect(await codeOf(await sql(key))).toBe('QUERY_INVALID');
    expect((await exportFile(key)).status).toBe(404);
    expect((await uploadSheet(key)).status).toBe(202);
  });

  it('accounts an operator makes are verified', async () => {
    const { apiKey } = await api.account();
    expect(await codeOf(await sql(apiKey))).toBe('QUERY_INVALID');
  });

  it('stores the link\'s token only as its SHA-256', async () => {
    const browser = await signUp();
    const token = tokenOf(await smtp.next(browser.email), 'verify');
    const rows = await ctx.db('email_tokens as t').join('dashboard_users as u', 'u.id', 't.user_id').where('u.email', browser.email).select('t.*');
    expect(rows).toHaveLength(1);
    expect(rows[0].token_hash).toBe(createHash('sha256').update(token).digest('hex'));
    expect(JSON.stringify(rows)).not.toContain(token);
  });

  it('refuses a reused, an expired, a forged and a malformed token with a clear 400', async () => {
    const first = await signUp();
    const used = tokenOf(await smtp.next(first.email), 'verify');
    expect((await call('/email/verify', { token: used })).status).toBe(200);
    const again = await call('/email/verify', { token: used });
    expect(again.status).toBe(400);
    expect(await again.json()).toMatchObject({ code: 'EMAIL_LINK_INVALID', message: expect.stringContaining('used already') });

    const second = await signUp();
    const old = tokenOf(await smtp.next(second.email), 'verify');
    await ctx.db('email_tokens').where({ token_hash: createHash('sha256').update(old).digest('hex') }).update({ expires_at: new Date(Date.now() - 1000) });
    const expired = await call('/email/verify', { token: old });
    expect(expired.status).toBe(400);
    expect(await expired.json()).toMatchObject({ code: 'EMAIL_LINK_INVALID', message: expect.stringContaining('expired') });
    expect(((await (await call('/session', undefined, second)).json()) as { email_verified: boolean }).email_verified).toBe(false);

    const forged = await call('/email/verify', { token: randomBytes(32).toString('base64url') });
    expect(forged.status).toBe(400);
    expect(await forged.json()).toMatchObject({ code: 'EMAIL_LINK_INVALID', message: expect.stringContaining('not valid') });
    const malformed = await call('/email/verify', { token: 'abc' });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toEqual({ status: 'error', message: expect.stringContaining('This link is not valid') });
  });

  it('resends a working link; once one is used the others stop; a verified account has nothing to resend', async () => {
    const browser = await signUp();
    const first = tokenOf(await smtp.next(browser.email), 'verify');
    const resent = await call('/email/resend', {}, browser);
    expect(resent.status).toBe(202);
    const second = tokenOf(await smtp.next(browser.email), 'verify');
    expect(second).not.toBe(first);
    expect((await call('/email/verify', { token: second })).status).toBe(200);
    expect(await codeOf(await call('/email/verify', { token: first }))).toBe('EMAIL_LINK_INVALID');
    const nothing = await call('/email/resend', {}, browser);
    expect(nothing.status).toBe(400);
    expect(((await nothing.json()) as { message: string }).message).toBe('Your email is verified already.');
    // Resend is a change: it needs the session and its CSRF token.
    expect((await call('/email/resend', {}, { cookie: browser.cookie })).status).toBe(403);
  });
});

describe('resend floods', () => {
  const limited = async (res: Response) => {
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await res.json()).toMatchObject({ code: 'EMAIL_RATE_LIMITED' });
  };

  it('limits resends per account with 429 and Retry-After', async () => {
    const browser = await signUp();
    for (let i = 0; i < EMAIL_LIMITS.verifyPerAccount.points; i++) expect((await call('/email/resend', {}, browser)).status).toBe(202);
    await limited(await call('/email/resend', {}, browser));
  });

  it('limits resends per address across accounts; another address is unaffected', async () => {
    const own = await ctx.start({ config: { TRUST_PROXY_HOPS: '1', SMTP_URL: smtp.url } });
    try {
      const address = '198.51.100.40';
      const accounts = Math.ceil(EMAIL_LIMITS.verifyPerAddress.points / EMAIL_LIMITS.verifyPerAccount.points) + 1;
      const browsers = await Promise.all(Array.from({ length: accounts }, (_, i) => signUp(own.url, `198.51.100.${i + 50}`)));
      let sent = 0;
      for (const browser of browsers) {
        for (let i = 0; i < EMAIL_LIMITS.verifyPerAccount.points && sent < EMAIL_LIMITS.verifyPerAddress.points; i++, sent++) {
          expect((await call('/email/resend', {}, browser, own.url, address)).status).toBe(202);
        }
      }
      const last = browsers.at(-1) as Browser;
      await limited(await call('/email/resend', {}, last, own.url, address));
      expect((await call('/email/resend', {}, last, own.url, '203.0.113.40')).status).toBe(202);
    } finally {
      await own.close();
    }
  });

  it('limits reset requests per email (known or not) and per address', async () => {
    const own = await ctx.start({ config: { TRUST_PROXY_HOPS: '1', SMTP_URL: smtp.url } });
    try {
      for (const email of [(await signUp(own.url)).email, freshEmail()]) {
        for (let i = 0; i < EMAIL_LIMITS.resetPerEmail.points; i++) expect((await call('/password/forgot', { email }, undefined, own.url, `198.51.100.${i + 80}`)).status).toBe(202);
        await limited(await call('/password/forgot', { email }, undefined, own.url, '198.51.100.99'));
      }
      for (let i = 0; i < EMAIL_LIMITS.resetPerAddress.points; i++) expect((await call('/password/forgot', { email: freshEmail() }, undefined, own.url, '198.51.100.120')).status).toBe(202);
      await limited(await call('/password/forgot', { email: freshEmail() }, undefined, own.url, '198.51.100.120'));
    } finally {
      await own.close();
    }
  });
});

describe('password reset by email', () => {
  it('answers alike whether or not the email has an account, and mails only an account', async () => {
    const { email } = await signUp();
    await smtp.next(email);
    const unknown = `nobody-${Date.now()}@example.com`;
    const forUnknown = await call('/password/forgot', { email: unknown });
    const forKnown = await call('/password/forgot', { email: email.toUpperCase() });
    expect(forUnknown.status).toBe(202);
    expect(forKnown.status).toBe(forUnknown.status);
    expect(await forKnown.json()).toEqual(await forUnknown.json());
    expect(tokenOf(await smtp.next(email), 'reset')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(smtp.received.filter((m) => m.to === unknown)).toEqual([]);
  });

  it('sets the new password and ends every session; the link works once and expires', async () => {
    const browser = await signUp();
    const other = (await call('/signin', { email: browser.email, password: PASSWORD })).headers;
    const otherCookie = (other.getSetCookie().find((c) => c.startsWith('uda_session=')) ?? '').split(';')[0] as string;
    await smtp.next(browser.email);
    await call('/password/forgot', { email: browser.email });
    const token = tokenOf(await smtp.next(browser.email), 'reset');

    const short = await call('/password/reset', { token, password: 'short' });
    expect(short.status).toBe(400);
    const reset = await call('/password/reset', { token, password: 'a brand new password' }, browser);
    expect(reset.status).toBe(200);
    expect(reset.headers.getSetCookie().find((c) => c.startsWith('uda_session='))).toMatch(/Max-Age=0/);
    for (const cookie of [browser.cookie, otherCookie]) expect((await call('/session', undefined, { cookie })).status).toBe(401);
    expect((await call('/signin', { email: browser.email, password: PASSWORD })).status).toBe(401);
    const signedIn = await call('/signin', { email: browser.email, password: 'a brand new password' });
    expect(signedIn.status).toBe(200);
    // The link came to the mailbox: the email counts as verified.
    expect(((await (await call('/session', undefined, { cookie: cookieOf(signedIn) })).json()) as { email_verified: boolean }).email_verified).toBe(true);

    const reused = await call('/password/reset', { token, password: 'another new password' });
    expect(reused.status).toBe(400);
    expect(await reused.json()).toMatchObject({ code: 'EMAIL_LINK_INVALID', message: expect.stringContaining('used already') });

    await call('/password/forgot', { email: browser.email });
    const late = tokenOf(await smtp.next(browser.email), 'reset');
    await ctx.db('email_tokens').where({ token_hash: createHash('sha256').update(late).digest('hex') }).update({ expires_at: new Date(Date.now() - 1000) });
    expect(await (await call('/password/reset', { token: late, password: 'another new password' })).json()).toMatchObject({ code: 'EMAIL_LINK_INVALID', message: expect.stringContaining('expired') });
    const forged = await call('/password/reset', { token: randomBytes(32).toString('base64url'), password: 'another new password' });
    expect(forged.status).toBe(400);
    expect(await forged.json()).toMatchObject({ code: 'EMAIL_LINK_INVALID' });
    expect((await call('/signin', { email: browser.email, password: 'a brand new password' })).status).toBe(200);
  });

  it('a verification token is no reset token', async () => {
    const browser = await signUp();
    const token = tokenOf(await smtp.next(browser.email), 'verify');
    expect(await codeOf(await call('/password/reset', { token, password: 'a brand new password' }))).toBe('EMAIL_LINK_INVALID');
  });
});

describe('without SMTP_URL', () => {
  it('writes the email as an .eml file under DATA_DIR/outbox and logs its path and link', async () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk: Buffer, _enc, done) => void (lines.push(chunk.toString()), done()) });
    const own = await ctx.start({ logger: pino({ level: 'info' }, sink) });
    try {
      const email = freshEmail();
      expect((await call('/signup', { email, password: PASSWORD }, undefined, own.url)).status).toBe(201);
      await own.services.mail.close();
      const logged = lines.map((l) => JSON.parse(l) as { msg: string; path?: string; link?: string }).find((l) => l.msg.startsWith('email written to the outbox'));
      expect(logged?.path).toMatch(new RegExp(`^${join(own.services.config.DATA_DIR, 'outbox')}/.+\\.eml$`));
      expect(await readdir(join(own.services.config.DATA_DIR, 'outbox'))).toHaveLength(1);
      const eml = await simpleParser(await readFile(logged?.path as string));
      expect(eml.to).toMatchObject({ text: email });
      expect(eml.text).toContain(logged?.link as string);
      const token = /#\/verify\/([A-Za-z0-9_-]+)$/.exec(logged?.link ?? '')?.[1];
      expect((await call('/email/verify', { token }, undefined, own.url)).status).toBe(200);
    } finally {
      await own.close();
    }
  });
});

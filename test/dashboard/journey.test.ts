/**
 * The dashboard journey in real Chromium (Debian's, through playwright-core) against a real API on
 * loopback with a query-runner on a real export, the sheets worker, PostgreSQL, Redis, S3 and a real
 * SMTP server: sign up, create a key (lookups work, SQL is 403 until the email is verified), resend
 * the verification email, follow its link, and the same key runs SQL; reveal, copy (read from the
 * clipboard), replace, revoke (the old keys are anonymous on lookups and 401 on SQL), upload a sheet
 * and wait for ready, search it, run SQL in the console and see its cost; forgot password, follow
 * the emailed link, set a new password: the old session has ended, the old password fails and the
 * new one signs in. Key and sheet names carry XSS payloads that must stay text. Screenshots of
 * every page go to test-output/screenshots/.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type { BrowserContext, Page } from 'playwright-core';
import type { SheetsWorker } from '@uda/exporter/sheets/worker';
import { startTestSheetsWorker } from '@uda/test-support/sheets-env';
import type { TestApi } from '@uda/test-support/api-harness';
import { type Stack, openStack } from '@uda/test-support/sql-stack';
import { launchChromium } from '@uda/test-support/browser';
import { type TestSmtp, startTestSmtp } from '@uda/test-support/smtp';
import { buildDashboard } from './build.ts';

const SHOTS = join(process.cwd(), 'test-output', 'screenshots');
const KEY_XSS = '<img src=x onerror="window.__xss=1">';
const SHEET_XSS = '<script>window.__xss=2</script><b>Q1</b>';
const SALES_CSV = 'Order ID,Amount,Customer Name\n1,10.50,Ada Lovelace\n2,7.25,"Grace, H."\n3,99.00,Alan\n';

let stack: Stack;
let worker: SheetsWorker;
let api: TestApi;
let smtp: TestSmtp;
let browser: BrowserContext;
let page: Page;
const cspViolations: string[] = [];

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  await buildDashboard();
  stack = await openStack('dashboard');
  worker = startTestSheetsWorker(stack.ctx.db, stack.bucket.store);
  smtp = await startTestSmtp();
  api = await stack.start({ config: { SMTP_URL: smtp.url } });
  browser = await launchChromium({ permissions: ['clipboard-read', 'clipboard-write'] });
  await browser.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: api.url });
  page = await browser.newPage();
  page.on('console', (message) => {
    if (/Content[- ]Security[- ]Policy/i.test(message.text())) cspViolations.push(message.text());
  });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await api?.close();
  await worker?.stop();
  await stack?.close();
  await smtp?.close();
});

const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
const statusText = () => page.getByRole('status').first().textContent();

async function lookup(key: string): Promise<{ status: number; account_state: string }> {
  const res = await fetch(`${api.url}/books/the%20art%20of%20war`, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, account_state: ((await res.json()) as { account_state: string }).account_state };
}

async function sql(key: string): Promise<number> {
  const res = await fetch(`${api.url}/api/v1/query`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ sql: 'SELECT title FROM gutenberg LIMIT 2' }),
  });
  await res.arrayBuffer();
  return res.status;
}

async function shownKey(): Promise<string> {
  const code = page.getByLabel('Full API key');
  await code.waitFor();
  return (await code.textContent()) ?? '';
}

it('a new user goes from sign-up to a verified key, sheets and SQL, then resets the password by email, all in the browser', async () => {
  try {
    await journey();
  } catch (error) {
    // The page as it was when the journey failed, for the CI artefacts.
    await shot('failure').catch(() => undefined);
    throw error;
  }
}, 240_000);

async function journey(): Promise<void> {
  const home = await page.goto(`${api.url}/dashboard/`);
  const csp = home?.headers()['content-security-policy'] ?? '';
  expect(csp).toContain("script-src 'self'");
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).not.toContain('unsafe-inline');

  // Sign up.
  const email = `journey-${Date.now()}@example.com`;
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill('a long enough password');
  await shot('sign-in');
  await page.getByRole('button', { name: 'Sign up' }).click();
  await page.getByRole('heading', { name: 'API keys' }).waitFor();
  expect(await page.getByText('Welcome!').isVisible()).toBe(true);
  // The Keys page says what an unverified account may do.
  await page.getByRole('heading', { name: 'Verify your email' }).waitFor();
  await page.getByText('your key makes lookups and MCP searches at the Free allowance; SQL, exports and sheet uploads answer 403').waitFor();
  await shot('api-keys-empty');

  // Create a key whose name is an XSS payload: shown as text, never run.
  await page.getByLabel('Key name').fill(KEY_XSS);
  await page.getByRole('button', { name: 'Create key' }).click();
  const key = await shownKey();
  expect(key).toMatch(/^service_[A-Za-z0-9]{40,}$/);
  await page.getByRole('cell', { name: KEY_XSS, exact: true }).waitFor();
  expect(await page.locator('table img').count()).toBe(0);
  await shot('api-keys-created');

  // Before the email is verified the key makes lookups, and SQL answers 403.
  expect(await lookup(key)).toEqual({ status: 200, account_state: 'authenticated' });
  expect(await sql(key)).toBe(403);
  // The sign-up email arrived; Resend sends another; its link, followed in the browser, verifies.
  expect((await smtp.next(email)).subject).toBe('Verify your email for the Unified Data API');
  await page.getByRole('button', { name: 'Resend email' }).click();
  await page.getByText(`We sent a new link to ${email}.`).waitFor();
  await shot('verify-email');
  const verification = await smtp.next(email);
  expect(verification.link).toMatch(new RegExp(`^${api.url}/dashboard/#/verify/[A-Za-z0-9_-]{43}$`));
  await page.goto(verification.link as string);
  await page.getByRole('heading', { name: 'Email verified' }).waitFor();
  await page.getByText(`${email} is verified`).waitFor();
  await shot('email-verified');
  await page.getByRole('link', { name: 'Go to your dashboard' }).click();
  await page.getByRole('heading', { name: 'API keys' }).waitFor();
  expect(await page.getByRole('heading', { name: 'Verify your email' }).count()).toBe(0);

  // Reveal and Copy.
  await page.reload();
  await page.getByRole('button', { name: 'Reveal' }).click();
  expect(await shownKey()).toBe(key);
  await page.getByRole('button', { name: 'Copy' }).click();
  await page.getByText('Copied the full key to the clipboard.').waitFor();
  expect(await page.evaluate('navigator.clipboard.readText()')).toBe(key);

  // The key works over real HTTP.
  expect(await lookup(key)).toEqual({ status: 200, account_state: 'authenticated' });
  expect(await sql(key)).toBe(200);

  // Replace: a new key with the same name; the old one is anonymous at once.
  await page.getByRole('button', { name: 'Replace' }).click();
  await page.getByRole('dialog').getByText('The old key stops working at once').waitFor();
  await page.getByRole('button', { name: 'Replace key' }).click();
  await page.getByText('Your replacement key').waitFor();
  const replacement = await shownKey();
  expect(replacement).not.toBe(key);
  await page.getByRole('cell', { name: 'deactivated' }).waitFor();
  expect(await page.getByRole('cell', { name: KEY_XSS, exact: true }).count()).toBe(2);
  expect(await lookup(key)).toEqual({ status: 200, account_state: 'anonymous' });
  expect(await sql(key)).toBe(401);
  expect(await lookup(replacement)).toEqual({ status: 200, account_state: 'authenticated' });

  // Keyboard: the dialog takes focus, Escape closes it without revoking, and focus goes back.
  await page.getByRole('button', { name: 'Revoke' }).focus();
  await page.keyboard.press('Enter');
  await page.getByRole('dialog').waitFor();
  expect(await page.evaluate('document.activeElement.closest("dialog") !== null')).toBe(true);
  await page.keyboard.press('Escape');
  await page.getByRole('dialog').waitFor({ state: 'detached' });
  expect(await page.evaluate('document.activeElement.textContent')).toBe('Revoke');
  expect(await lookup(replacement)).toEqual({ status: 200, account_state: 'authenticated' });

  // Revoke: the page says calls now run as anonymous, and they do.
  await page.getByRole('button', { name: 'Revoke', exact: true }).click();
  await page.getByRole('button', { name: 'Revoke key' }).click();
  await page.getByText('Key revoked. Calls with it now run as anonymous').waitFor();
  expect(await lookup(replacement)).toEqual({ status: 200, account_state: 'anonymous' });
  expect(await sql(replacement)).toBe(401);
  await page.getByLabel('Key name').fill('production');
  await page.getByRole('button', { name: 'Create key' }).click();
  const production = await shownKey();
  await shot('api-keys');

  // Sheets: upload with an XSS name, wait for ready, search.
  await page.getByRole('link', { name: 'Sheets' }).click();
  await page.getByRole('heading', { name: 'Connected sheets' }).waitFor();
  // The plan's sheets quota is shown, and follows what the account holds.
  const quota = page.getByTestId('sheet-quota');
  await page.getByText('Your plan holds 10 sheets and 100 MB of files: you use 0 sheets and 0 MB.').waitFor();
  await page.getByLabel('Sheet name').fill(SHEET_XSS);
  await page.getByLabel('File').setInputFiles({ name: 'sales.csv', mimeType: 'text/csv', buffer: Buffer.from(SALES_CSV) });
  await page.locator('.badge.ready').waitFor({ timeout: 20_000 });
  await page.getByRole('cell', { name: SHEET_XSS, exact: true }).waitFor();
  expect(await page.locator('table b').count()).toBe(0);
  expect(await quota.textContent()).toMatch(/^Your plan holds 10 sheets and 100 MB of files: you use 1 sheet and 0(\.\d)? MB\.$/);
  const slug = (await page.locator('tbody tr td:nth-child(2) code').first().textContent()) ?? '';
  await page.getByLabel('Search text').fill('grace');
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  await page.getByText('1 matching rows').waitFor();
  await page.getByRole('cell', { name: 'Grace, H.' }).waitFor();
  // Replace the file: the sheet goes back to processing, then ready with the new rows.
  await page.locator('tbody input[type=file]').setInputFiles({ name: 'more.csv', mimeType: 'text/csv', buffer: Buffer.from(`${SALES_CSV}4,1.00,Barbara\n`) });
  await page.getByRole('cell', { name: '4', exact: true }).waitFor({ timeout: 20_000 });
  await page.locator('.badge.ready').waitFor({ timeout: 20_000 });
  await shot('sheets');

  // SQL console: a public table costs credit the first time and is cached (free) the second.
  await page.getByRole('link', { name: 'SQL console' }).click();
  await page.getByLabel('SQL', { exact: true }).fill('SELECT title FROM gutenberg ORDER BY title LIMIT 3');
  await page.getByRole('button', { name: 'Run query' }).click();
  const cost = page.getByTestId('cost');
  await cost.waitFor();
  const firstCost = Number((await cost.textContent())?.replace('$', ''));
  expect(firstCost).toBeGreaterThan(0);
  expect(await page.getByText('3 rows.').isVisible()).toBe(true);
  await page.getByRole('button', { name: 'Run query' }).click();
  await page.getByText('yes (no charge)').waitFor();
  expect(Number((await cost.textContent())?.replace('$', ''))).toBe(0);
  // The table browser fills in the sheet's table name (its slug made SQL-safe).
  await page.getByRole('button', { name: `Use sheet ${slug.replaceAll('-', '_')}` }).click();
  await page.getByRole('button', { name: 'Run query' }).click();
  await page.getByRole('cell', { name: 'Ada Lovelace' }).waitFor();
  await shot('sql-console');

  // Usage: the SQL charge is in the ledger, and the balance is the one X-Credits-Remaining says
  // (buckets plus the open credit lease's unspent part, DECISIONS §3 "One balance").
  await lookup(production);
  const remaining = (await fetch(`${api.url}/api/v1/auth/usage`, { headers: { authorization: `Bearer ${production}` } })).headers.get('x-credits-remaining');
  await page.getByRole('link', { name: 'Usage' }).click();
  await page.getByRole('heading', { name: 'Usage and credit' }).waitFor();
  await page.getByRole('cell', { name: 'charge' }).first().waitFor();
  expect(await page.locator('.cards dd').first().textContent()).toBe(`$${Number(remaining).toFixed(2)}`);
  await shot('usage');

  // Delete the sheet.
  await page.getByRole('link', { name: 'Sheets' }).click();
  await page.getByRole('button', { name: `Delete ${SHEET_XSS}` }).click();
  await page.getByRole('button', { name: 'Delete sheet' }).click();
  await page.getByText('No sheets yet.').waitFor();
  expect(await quota.textContent()).toBe('Your plan holds 10 sheets and 100 MB of files: you use 0 sheets and 0 MB.');

  // Forgot password: the emailed link sets a new password and ends every session.
  // Two sessions are open: this browser's, and one signed in elsewhere.
  const elsewhere = await fetch(`${api.url}/dashboard/api/signin`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: 'a long enough password' }),
  });
  const sessions = [
    `uda_session=${(await browser.cookies(`${api.url}/dashboard/`)).find((c) => c.name === 'uda_session')?.value}`,
    (elsewhere.headers.getSetCookie()[0] ?? '').split(';')[0] as string,
  ];
  const sessionAnswers = () => Promise.all(sessions.map(async (cookie) => (await fetch(`${api.url}/dashboard/api/session`, { headers: { cookie } })).status));
  expect(await sessionAnswers()).toEqual([200, 200]);
  await page.goto(`${api.url}/dashboard/#/forgot`);
  await page.getByRole('heading', { name: 'Forgot password' }).waitFor();
  await page.getByLabel('Email').fill(email);
  await page.getByRole('button', { name: 'Send reset link' }).click();
  await page.getByText('If an account uses this email, a link to reset its password is on its way.').waitFor();
  await shot('forgot-password');
  const reset = await smtp.next(email);
  expect(reset.subject).toBe('Reset your Unified Data API password');
  await page.goto(reset.link as string);
  await page.getByRole('heading', { name: 'Reset password' }).waitFor();
  await page.getByLabel('New password', { exact: true }).fill('a brand new password');
  await page.getByLabel('New password again').fill('a brand new password');
  await page.getByRole('button', { name: 'Set new password' }).click();
  await page.getByText('Your password is changed and every session has ended.').waitFor();
  await shot('reset-password');
  expect(await sessionAnswers()).toEqual([401, 401]);
  await page.getByRole('link', { name: 'Sign in' }).click();
  await page.getByRole('link', { name: 'Forgot password?' }).waitFor();
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill('a long enough password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByText('Wrong email or password.').waitFor();
  await page.getByLabel('Password').fill('a brand new password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'API keys' }).waitFor();

  // Sign out ends the session.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('button', { name: 'Sign in' }).waitFor();
  await page.reload();
  await page.getByRole('button', { name: 'Sign in' }).waitFor();

  expect(await page.evaluate('window.__xss')).toBeUndefined();
  expect(cspViolations).toEqual([]);
  expect(await statusText()).toBeDefined();
}

/**
 * `/docs` renders the OpenAPI document in real Chromium with the bundled Scalar: every request the
 * page makes stays on this server (no CDN), nothing breaks the page's CSP, and a screenshot is
 * written for a human to look at.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { launchChromium } from '@uda/test-support/browser';
import { type TestContext, openTestContext } from '@uda/test-support/api-harness';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await openTestContext();
});
afterAll(async () => {
  await ctx.close();
});

const SCREENSHOT = join(process.cwd(), '.data', 'screenshots', 'docs.png');

describe('/docs', () => {
  it('renders the API reference from /api/v1/openapi.json with assets from this server only', async () => {
    const api = await ctx.start();
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      const requested: string[] = [];
      const problems: string[] = [];
      page.on('request', (req) => requested.push(req.url()));
      page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
      page.on('console', (msg) => {
        if (msg.type() === 'error' && /Content Security Policy|Refused/.test(msg.text())) problems.push(msg.text());
      });

      const res = await page.goto(`${api.url}/docs`);
      expect(res?.status()).toBe(200);
      // The generated content: the title, a tag, and operations of several families.
      await page.getByText('Unified Data API').first().waitFor({ timeout: 30_000 });
      await page.getByText('Keyword lookup in one source').first().waitFor({ timeout: 30_000 });
      mkdirSync(join(SCREENSHOT, '..'), { recursive: true });
      await page.screenshot({ path: SCREENSHOT, fullPage: false });
      console.log(`/docs screenshot: ${SCREENSHOT}`);
      // Every tag of the document is a group in the sidebar.
      const text = await page.locator('body').innerText();
      for (const tag of ['Lookups', 'SQL', 'Exports', 'Connected sheets', 'Account', 'MCP']) expect(text).toContain(tag);

      expect(requested.filter((url) => !url.startsWith(api.url) && !url.startsWith('data:'))).toEqual([]);
      expect(requested).toContain(`${api.url}/api/v1/openapi.json`);
      expect(problems).toEqual([]);
    } finally {
      await browser.close();
      await api.close();
    }
  });
});

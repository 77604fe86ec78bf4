/**
 * Shared contract tests for a metered route (STYLE §10): its 401 (key-required routes), 402 (zero
 * balance, and a result that costs more than the balance when `costlyPath` is given) and 429
 * (anonymous allowance or daily cap). Call inside a test file that owns a `TestContext`.
 */
import { describe, expect, it } from '@jest/globals';
import type { RouteDef } from '../../src/routes/types.ts';
import type { Services } from '../../src/services.ts';
import type { TestContext } from '@uda/test-support/api-harness';

export interface MeteredRouteSpec {
  name: string;
  /** The path to call; `token` is never added, keys go in the header. */
  path: string;
  /** 'lookup': anonymous allowance and envelope 402; 'export' / 'sheet': key required, daily cap, flat 402. */
  kind: 'lookup' | 'export' | 'sheet';
  /** A path whose result costs more than $0.01, for the settle-time 402. */
  costlyPath?: string;
  extraRoutes?: (services: Services) => RouteDef[];
}

export function describeMeteredRoute(getCtx: () => TestContext, spec: MeteredRouteSpec): void {
  const start = (limits = {}) => getCtx().start({ extraRoutes: spec.extraRoutes, limits });

  describe(`${spec.name}: metered-route contract`, () => {
    if (spec.kind !== 'lookup') {
      it('401 without a key, with the spec body', async () => {
        const api = await start();
        const res = await api.get(spec.path);
        expect(res.status).toBe(401);
        expect(await res.json()).toEqual(
          spec.kind === 'sheet'
            ? { error: 'Unauthorized', message: 'No token provided' }
            : { status: 'error', message: 'Authentication required. Include your API key in the Authorization header.' },
        );
        await api.close();
      });
    }

    if (spec.kind !== 'sheet') {
      it('402 up front at zero balance, nothing charged', async () => {
        const api = await start();
        const { accountId, apiKey } = await api.account({ usd: '0' });
        const res = await api.get(spec.path, { key: apiKey });
        expect(res.status).toBe(402);
        expect(await res.json()).toMatchObject({ status: 'error', error: 'insufficient_credit', credits: { remaining_usd: 0 } });
        expect(await getCtx().db('ledger').where({ account_id: accountId })).toHaveLength(0);
        await api.close();
      });
    }

    if (spec.costlyPath) {
      it('402 after the result when it costs more than the balance, nothing charged', async () => {
        const api = await start();
        const { accountId, apiKey } = await api.account({ usd: '0.01' });
        const res = await api.get(spec.costlyPath as string, { key: apiKey });
        expect(res.status).toBe(402);
        const body = (await res.json()) as { credits: { remaining_usd: number; request_cost_usd: number } };
        expect(body.credits.remaining_usd).toBe(0.01);
        expect(body.credits.request_cost_usd).toBeGreaterThan(0.01);
        expect(await api.services.billing.balance(accountId)).toBe(10_000);
        await api.close();
      });
    }

    it('429 when its limit is spent', async () => {
      if (spec.kind === 'lookup') {
        const api = await start({ anonymous: { points: 2, windowS: 86_400 } });
        for (let i = 0; i < 2; i++) expect((await api.get(spec.path)).status).toBe(200);
        const res = await api.get(spec.path);
        expect(res.status).toBe(429);
        expect(await res.json()).toMatchObject({ error: 'REQUEST_LIMIT_EXCEEDED', limit: 2, remaining: 0 });
        await api.close();
        return;
      }
      const api = await start(spec.kind === 'export' ? { exportDaily: 1 } : { sheetDaily: 1 });
      const { apiKey } = await api.account();
      expect((await api.get(spec.path, { key: apiKey })).status).toBe(200);
      const res = await api.get(spec.path, { key: apiKey });
      expect(res.status).toBe(429);
      expect(res.headers.get('retry-after')).toBeTruthy();
      expect(((await res.json()) as { message: string }).message).toContain('Maximum 1,000');
      await api.close();
    });
  });
}

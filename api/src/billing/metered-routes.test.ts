/**
 * The shared metered-route contract, run against the test-only routes that wire the gateway
 * pieces together the way product routes do. Product routes call `describeMeteredRoute` the same way.
 */
import { afterAll, beforeAll } from '@jest/globals';
import { describeMeteredRoute } from '../../test/support/metered-route-tests.ts';
import { type TestContext, openTestContext } from '@uda/test-support/api-harness';
import { testRoutes } from '../../test/support/test-routes.ts';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await openTestContext();
});
afterAll(async () => {
  await ctx.close();
});

describeMeteredRoute(() => ctx, { name: 'lookup', path: '/test/lookup/x', kind: 'lookup', costlyPath: '/test/lookup/x?rows=3', extraRoutes: testRoutes });
describeMeteredRoute(() => ctx, { name: 'export', path: '/test/export', kind: 'export', costlyPath: '/test/export?cost=20000', extraRoutes: testRoutes });
describeMeteredRoute(() => ctx, { name: 'sheet', path: '/test/sheet', kind: 'sheet', extraRoutes: testRoutes });

/**
 * Handlers take their input as their declaration parsed it (`inputOf`), never parsing it again:
 * for one route of each table (public, dashboard session, admin), a value the schema coerces or
 * transforms reaches the handler as the schema's output, over real HTTP, PostgreSQL and Redis.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import express, { type RequestHandler } from 'express';
import { buildAdminApp } from '../admin/app.ts';
import { errorHandler } from '../errors/handler.ts';
import { type TestApi, type TestContext, openTestContext } from '@uda/test-support/api-harness';
import { ADMIN_ROUTES, API_ROUTES, SESSION_ROUTES } from './table.ts';
import type { RouteDeclaration } from './declare.ts';
import { inputOf, validateInput } from './validate.ts';

let ctx: TestContext;
let api: TestApi;
const servers: Server[] = [];
beforeAll(async () => {
  ctx = await openTestContext();
  api = await ctx.start();
});
afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  await ctx.close();
});

async function listen(app: express.Express): Promise<string> {
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function declared(table: readonly RouteDeclaration[], method: string, path: string): RouteDeclaration {
  const route = table.find((r) => r.method === method && r.path === path);
  if (!route?.doc) throw new Error(`no declaration of ${method} ${path}`);
  return route;
}

/** The declaration's own validation step, then a last handler that answers what `inputOf` gave it. */
async function probe(route: RouteDeclaration, read: (req: express.Request) => unknown): Promise<string> {
  const app = express();
  app.use(express.json());
  const answer: RequestHandler = (req, res) => {
    res.json({ input: read(req) });
  };
  app[route.method](route.path, validateInput(route.path, route.doc!)!, answer);
  app.use(errorHandler({ logger: api.services.logger }));
  return listen(app);
}

describe('the declaration parses, the handler receives', () => {
  it('public: the search route hands over its path and query as parsed', async () => {
    const route = declared(API_ROUTES, 'get', '/api/v1/datasets/:id/search');
    const url = await probe(route, (req) => ({ id: inputOf(req, route.doc!.params!), query: inputOf(req, route.doc!.query!) }));
    const res = await fetch(`${url}/api/v1/datasets/my-sheet/search?q=rain`);
    expect(await res.json()).toEqual({ input: { id: { id: 'my-sheet' }, query: { q: 'rain' } } });
    expect((await fetch(`${url}/api/v1/datasets/my-sheet/search`)).status).toBe(400);
  });

  it('public: the lookup route\'s ?limit= arrives as a number, defaulted', async () => {
    const route = API_ROUTES.find((r) => r.doc?.operationId === 'lookup');
    if (!route?.doc?.query) throw new Error('no lookup declaration');
    const query = route.doc.query;
    const url = await probe(route, (req) => inputOf(req, query));
    const limitOf = async (search: string) => ((await (await fetch(`${url}/gutenberg/war${search}`)).json()) as { input: { limit: unknown } }).input.limit;
    expect(await limitOf('?limit=7')).toBe(7);
    expect(await limitOf('')).toBe(10);
    expect((await fetch(`${url}/gutenberg/war?limit=51`)).status).toBe(400);
  });

  it('session: the ledger page arrives as a clamped number', async () => {
    const route = declared(SESSION_ROUTES, 'get', '/ledger');
    const url = await probe(route, (req) => inputOf(req, route.doc!.query!));
    const pageOf = async (query: string) => ((await (await fetch(`${url}/ledger${query}`)).json()) as { input: { page: unknown } }).input.page;
    expect(await pageOf('?page=3')).toBe(3);
    expect(await pageOf('?page=abc')).toBe(0);
    expect(await pageOf('?page=99999')).toBe(10_000);
    expect(await pageOf('')).toBe(0);
  });

  it('admin: an amount in USD arrives in micro-USD', async () => {
    const route = declared(ADMIN_ROUTES, 'post', '/admin/accounts/:id/topoff');
    const schema = route.doc!.body!.schema;
    const url = await probe(route, (req) => inputOf(req, schema));
    const post = (usd: unknown) => fetch(`${url}/admin/accounts/a/topoff`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ usd }) });
    expect(await (await post('2.5')).json()).toEqual({ input: { usd: 2_500_000 } });
    expect(await (await post(1.25)).json()).toEqual({ input: { usd: 1_250_000 } });
    expect((await post('-1')).status).toBe(400);
  });

  it('a schema the route did not validate is never handed over unchecked: a 500', async () => {
    const route = declared(SESSION_ROUTES, 'get', '/ledger');
    const url = await probe(route, (req) => inputOf(req, declared(ADMIN_ROUTES, 'post', '/admin/accounts').doc!.body!.schema));
    expect((await fetch(`${url}/ledger?page=1`)).status).toBe(500);
  });
});

describe('the mounted routes run on their parsed input', () => {
  it('session: GET /dashboard/api/ledger?page= answers the page it was given, as a number', async () => {
    const signup = await fetch(`${api.url}/dashboard/api/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: `ledger-${Date.now()}@example.com`, password: 'correct horse battery' }),
    });
    expect(signup.status).toBe(201);
    const cookie = (signup.headers.getSetCookie()[0] ?? '').split(';')[0] as string;
    const page = async (query: string) => ((await (await fetch(`${api.url}/dashboard/api/ledger${query}`, { headers: { cookie } })).json()) as { page: unknown }).page;
    expect(await page('?page=3')).toBe(3);
    expect(await page('?page=-4')).toBe(0);
  });

  it('admin: a top-off given as text is credited as its amount', async () => {
    const url = await listen(buildAdminApp(api.services));
    const { accountId } = await api.account({ tier: 'free' });
    const res = await fetch(`${url}/admin/accounts/${accountId}/topoff`, {
      method: 'POST',
      headers: { authorization: `Bearer ${api.services.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ usd: '2.5' }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ account_id: accountId, topoff_usd: 2.5 });
  });
});

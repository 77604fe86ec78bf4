/**
 * The OpenAPI document: valid OpenAPI 3.1, served as generated, written to docs/openapi.json, and
 * in step with what the app mounts (a mounted route missing from it, or a documented route that is
 * not mounted, fails here).
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { Express } from 'express';
import { OPENAPI_FILE, renderOpenApi } from './render.ts';
import { buildApp } from '../app.ts';
import { API_ROUTES, openApiDocument } from '../routes/table.ts';
import { type TestContext, openTestContext } from '@uda/test-support/api-harness';

type Doc = { paths: Record<string, Record<string, { security?: Record<string, string[]>[]; responses: Record<string, unknown> }>> };
const doc = () => openApiDocument() as Doc;

let ctx: TestContext;
beforeAll(async () => {
  ctx = await openTestContext();
});
afterAll(async () => {
  await ctx.close();
});

type Layer = { route?: { path: string | RegExp; methods: Record<string, boolean> }; handle?: { routers?: { stack: Layer[] }[] } };

/** The layers of `stack` that are routes, looking inside the first-segment dispatch's routers (`routes/dispatch.ts`). */
function routeLayers(stack: Layer[]): Layer[] {
  return stack.flatMap((layer) => (layer.route ? [layer] : (layer.handle?.routers ?? []).flatMap((router) => routeLayers(router.stack))));
}

/** `METHOD /openapi/path` of every route Express has mounted; RegExp paths are named by their declaration. */
function mountedOperations(app: Express): string[] {
  const stack = (app as unknown as { router: { stack: Layer[] } }).router.stack;
  const out = new Set<string>();
  for (const layer of routeLayers(stack)) {
    const declared = API_ROUTES.find((r) => r.path === layer.route!.path || String(r.path) === String(layer.route!.path));
    if (declared?.undocumented) continue;
    const path = declared?.doc?.path ?? String(layer.route!.path).replace(/:(\w+)/g, '{$1}');
    for (const method of Object.keys(layer.route!.methods)) {
      out.add(`${method.toUpperCase()} ${path}`);
      // Express answers HEAD with a GET route; the document lists HEAD where the route declares it.
      if (method === 'get' && declared?.doc?.head) out.add(`HEAD ${path}`);
    }
  }
  return [...out].sort();
}

function documentedOperations(): string[] {
  return Object.entries(doc().paths)
    .flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`))
    .sort();
}

describe('OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(openApiDocument()) as Parameters<Validator['validate']>[0]);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('documents every mounted route, and mounts every documented one', async () => {
    const api = await ctx.start();
    const mounted = mountedOperations(buildApp(api.services));
    expect(mounted).toEqual(documentedOperations());
    // Every public route of the spec, by path.
    expect(Object.keys(doc().paths).sort()).toEqual(
      [
        '/api/v1/openapi.json',
        '/api/v1/query',
        '/api/v1/query.csv',
        '/api/v1/query.parquet',
        '/api/v1/export/{name}',
        '/api/v1/auth/usage',
        '/mcp',
        '/api/v1/datasets',
        '/api/v1/datasets/{id}',
        '/api/v1/datasets/{id}/file',
        '/api/v1/datasets/{id}/search',
        '/api/v1/datasets/{id}/query',
        '/https:/{wikipediaUrl}',
        '/{source}/{keywords}',
      ].sort(),
    );
    await api.close();
  });

  it('every route not in the document says why', () => {
    for (const route of API_ROUTES) expect(Boolean(route.doc) !== Boolean(route.undocumented)).toBe(true);
  });

  it('offers `token` exactly on the routes SPEC Authentication §2 lists', () => {
    const withToken = Object.entries(doc().paths)
      .flatMap(([path, item]) => Object.entries(item).filter(([, op]) => op.security?.some((s) => 'token' in s)).map(([m]) => `${m.toUpperCase()} ${path}`))
      .sort();
    expect(withToken).toEqual(
      [
        'GET /{source}/{keywords}',
        'HEAD /{source}/{keywords}',
        'GET /https:/{wikipediaUrl}',
        'HEAD /https:/{wikipediaUrl}',
        'GET /api/v1/export/{name}',
        'HEAD /api/v1/export/{name}',
        'GET /api/v1/query.csv',
        'HEAD /api/v1/query.csv',
        'GET /api/v1/query.parquet',
        'HEAD /api/v1/query.parquet',
        'POST /mcp',
        // DECISIONS §8: the connected-sheet routes accept it too.
        'GET /api/v1/datasets',
        'POST /api/v1/datasets',
        'GET /api/v1/datasets/{id}',
        'DELETE /api/v1/datasets/{id}',
        'PUT /api/v1/datasets/{id}/file',
        'GET /api/v1/datasets/{id}/search',
        'POST /api/v1/datasets/{id}/query',
      ].sort(),
    );
  });

  it('is served at /api/v1/openapi.json and written to docs/openapi.json (run `npm run docs:openapi` to update)', async () => {
    const api = await ctx.start();
    const res = await api.get('/api/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual(JSON.parse(JSON.stringify(openApiDocument())));
    expect(await readFile(OPENAPI_FILE, 'utf8')).toBe(renderOpenApi());
    await api.close();
  });
});

describe('input validation from the route declarations', () => {
  it('refuses a bad query with the route’s code and message, before the handler runs', async () => {
    const api = await ctx.start();
    const { apiKey } = await api.account();
    // The SQL routes answer QUERY_INVALID (SPEC), in the flat shape.
    const twice = await api.get('/api/v1/query.csv?sql=SELECT%201&sql=SELECT%202', { key: apiKey });
    expect(twice.status).toBe(400);
    expect(await twice.json()).toEqual({ status: 'error', message: 'Send `sql` (and optional `datasets`) once each as query parameters.', code: 'QUERY_INVALID' });
    const body = await api.get('/api/v1/query', { method: 'POST', key: apiKey, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sql: 'SELECT 1', datasetIds: 'x' }) });
    expect(body.status).toBe(400);
    expect(await body.json()).toMatchObject({ status: 'error', code: 'QUERY_INVALID' });
    // Lookups answer in the lookup envelope.
    const limit = await api.get('/gutenberg/war?limit=51');
    expect(limit.status).toBe(400);
    expect(await limit.json()).toEqual({ status: 'error', account_state: 'anonymous', data: { error: 'limit must be a whole number from 1 to 50.' } });
    // Exports: a repeated parameter is not a single value.
    const exportRes = await api.get('/api/v1/export/gutenberg?format=csv&format=parquet', { key: apiKey });
    expect(exportRes.status).toBe(400);
    expect(await exportRes.json()).toEqual({ status: 'error', message: 'format, table and version are single text values.' });
    // Nothing was charged for any of them.
    await api.close();
  });

  it('still answers 401 before validating input on key-required routes', async () => {
    const api = await ctx.start();
    const res = await api.get('/api/v1/query.csv?sql=a&sql=b');
    expect(res.status).toBe(401);
    await api.close();
  });
});

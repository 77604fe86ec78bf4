/**
 * The internal routes (the dashboard's session API, the admin API) are declared in the one route
 * table like the public ones, and left out of the public OpenAPI document: every route their apps
 * mount is in the table, with its visibility (`session`, `internal`), and none of them is in
 * `docs/openapi.json`.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type express from 'express';
import type { Router } from 'express';
import { buildAdminApp } from '../admin/app.ts';
import { OPENAPI_FILE } from './render.ts';
import type { RouteDeclaration } from '../routes/declare.ts';
import { sessionRouter } from '../routes/mount.ts';
import { ADMIN_ROUTES, SESSION_ROUTES } from '../routes/table.ts';
import { type TestApi, type TestContext, openTestContext } from '@uda/test-support/api-harness';
import { buildOpenApiDocument } from './document.ts';

let ctx: TestContext;
let api: TestApi;
beforeAll(async () => {
  ctx = await openTestContext();
  api = await ctx.start();
});
afterAll(() => ctx.close());

type Stack = { route?: { path: string; methods: Record<string, boolean> } }[];

/** `METHOD path` of every route on a router or app. */
function mounted(stack: Stack): string[] {
  return stack.flatMap((layer) => (layer.route ? Object.keys(layer.route.methods).map((m) => `${m.toUpperCase()} ${layer.route!.path}`) : []));
}

const declaredAs = (table: readonly RouteDeclaration[]) => table.map((r) => `${r.method.toUpperCase()} ${String(r.path)}`);

describe('internal routes', () => {
  const tables = { session: SESSION_ROUTES, admin: ADMIN_ROUTES };

  it.each(Object.entries(tables))('%s: every route is declared with its schemas and not public', (_name, table) => {
    expect(table.length).toBeGreaterThan(0);
    for (const route of table) {
      expect(route.visibility).not.toBe('public');
      expect(route.doc?.operationId).toEqual(expect.any(String));
    }
  });

  it('the session router and the admin app mount exactly their tables', () => {
    const session = sessionRouter(SESSION_ROUTES, api.services) as Router & { stack: Stack };
    expect(mounted(session.stack).sort()).toEqual(declaredAs(SESSION_ROUTES).sort());
    const admin = buildAdminApp(api.services) as express.Express & { router: { stack: Stack } };
    expect(mounted(admin.router.stack).sort()).toEqual(declaredAs(ADMIN_ROUTES).sort());
  });

  it('none of them is in the public OpenAPI document', async () => {
    const published = JSON.parse(await readFile(OPENAPI_FILE, 'utf8')) as { paths: Record<string, Record<string, { operationId: string }>> };
    const operationIds = Object.values(published.paths).flatMap((item) => Object.values(item).map((op) => op.operationId));
    for (const route of [...SESSION_ROUTES, ...ADMIN_ROUTES]) {
      expect(Object.keys(published.paths)).not.toContain(route.doc!.path);
      expect(operationIds).not.toContain(route.doc!.operationId);
    }
    expect(Object.keys(published.paths).filter((p) => p.startsWith('/dashboard') || p.startsWith('/admin'))).toEqual([]);
    expect(buildOpenApiDocument([...SESSION_ROUTES, ...ADMIN_ROUTES]).paths).toEqual({});
  });
});

/**
 * The document works with codegen: openapi-typescript's types (generated from docs/openapi.json,
 * kept in step by `npm run docs:openapi`) type a small client whose calls the compiler checks
 * against the routes, and whose answers match those types at run time.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { OPENAPI_TYPES_FILE, renderOpenApiTypes } from './render.ts';
import type { paths } from '../../test/generated/openapi-types.ts';
import { type TestContext, openTestContext } from '@uda/test-support/api-harness';

type JsonOf<P extends keyof paths, M extends 'get' | 'post', S extends number> = paths[P][M] extends {
  responses: { [K in S]: { content: { 'application/json': infer B } } };
}
  ? B
  : never;

/** A GET whose path and answer are typed by the generated `paths`. */
async function typedGet<P extends keyof paths, S extends number = 200>(base: string, path: P, init: { key?: string; status?: S } = {}): Promise<JsonOf<P, 'get', S>> {
  const res = await fetch(`${base}${path}`, { headers: init.key ? { authorization: `Bearer ${init.key}` } : {} });
  expect(res.status).toBe(init.status ?? 200);
  return (await res.json()) as JsonOf<P, 'get', S>;
}

let ctx: TestContext;
beforeAll(async () => {
  ctx = await openTestContext();
});
afterAll(async () => {
  await ctx.close();
});

describe('typed client from openapi-typescript', () => {
  it('the generated types are current (run `npm run docs:openapi` to update)', async () => {
    expect(await readFile(OPENAPI_TYPES_FILE, 'utf8')).toBe(await renderOpenApiTypes());
  });

  it('calls the API with types generated from the document', async () => {
    const api = await ctx.start();
    const { apiKey } = await api.account();

    const usage = await typedGet(api.url, '/api/v1/auth/usage', { key: apiKey });
    // Compile-time: `usage.usage.request_limit` is a number and `account_state` a union of two literals.
    const limit: number = usage.usage.request_limit;
    const state: 'authenticated' | 'anonymous' = usage.account_state;
    expect({ limit, state }).toEqual({ limit: 1000, state: 'authenticated' });

    const sheets = await typedGet(api.url, '/api/v1/datasets', { key: apiKey });
    const names: string[] = sheets.datasets.map((d) => d.name);
    expect(names).toEqual([]);

    // Error bodies are typed too: a 401 on a connected-sheet route.
    const refused = await typedGet(api.url, '/api/v1/datasets', { status: 401 });
    const message: string = refused.message;
    expect(message).toBe('No token provided');
    await api.close();
  });
});

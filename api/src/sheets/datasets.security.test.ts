/**
 * Ownership (SPEC Authorization §7): another account's sheet answers exactly as an absent one on
 * every sheet route (404 `Dataset not found.`), and `resolveDatasets` (for `/api/v1/query`
 * `datasetIds`) refuses it, or a sheet that is not ready, with 403 naming the id.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ApiError } from '../errors/api-error.ts';
import type { TestApi } from '@uda/test-support/api-harness';
import { resolveDatasets } from './resolve.ts';
import { form, ingest, json } from '../../test/support/sheets-client.ts';
import { type SheetEnv, openSheetEnv } from '@uda/test-support/sheets-env';

let env: SheetEnv;
let api: TestApi;
let owner: { accountId: string; apiKey: string };
let intruder: { accountId: string; apiKey: string };
let sheet: Record<string, unknown>;
beforeAll(async () => {
  env = await openSheetEnv('sheetssec');
  api = await env.start();
  owner = await api.account();
  intruder = await api.account();
  sheet = await ingest(api, owner.apiKey, { content: 'a,b\n1,x\n', fileName: 'private.csv' }, { slug: 'private-sales' });
});
afterAll(async () => {
  await api.close();
  await env.close();
});

describe('another account’s sheet', () => {
  it('answers 404 Dataset not found. on every route, by UUID and by slug, exactly like an absent one', async () => {
    const notFound = { status: 404, body: { status: 'error', message: 'Dataset not found.' } };
    for (const id of [String(sheet.id), 'private-sales', randomUUID(), 'no-such-slug']) {
      const calls: [string, string, RequestInit][] = [
        ['GET', `/api/v1/datasets/${id}`, {}],
        ['PUT', `/api/v1/datasets/${id}/file`, { body: form({ content: 'a\n2\n', fileName: 'x.csv' }) }],
        ['DELETE', `/api/v1/datasets/${id}`, {}],
        ['GET', `/api/v1/datasets/${id}/search?q=x`, {}],
        ['POST', `/api/v1/datasets/${id}/query`, { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sql: 'SELECT * FROM sheet' }) }],
      ];
      for (const [method, path, init] of calls) {
        const res = await json(await api.get(path, { ...init, method, key: intruder.apiKey }));
        expect([method, path, res]).toEqual([method, path, notFound]);
      }
    }
    expect((await json(await api.get('/api/v1/datasets', { key: intruder.apiKey }))).body.datasets).toEqual([]);
    // Untouched by the attempts above.
    expect(await json(await api.get(`/api/v1/datasets/${sheet.id}`, { key: owner.apiKey }))).toEqual({ status: 200, body: sheet });
  });
});

describe('resolveDatasets', () => {
  it('gives the owner’s ready sheet by UUID or slug with its SQL name, Parquet key and version', async () => {
    const resolved = await resolveDatasets(api.services, owner.accountId, [String(sheet.id), 'private-sales']);
    expect(resolved).toEqual([{ id: sheet.id, name: 'private_sales', key: expect.stringMatching(/^sheets\/.+\/1\.parquet$/), version: 1 }]);
  });

  it('403 naming the id for another account’s sheet and for one still processing', async () => {
    const refusal = async (accountId: string, id: string) => {
      const error = await resolveDatasets(api.services, accountId, [id]).then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(ApiError);
      return { status: (error as ApiError).status, message: (error as ApiError).message };
    };
    expect(await refusal(intruder.accountId, String(sheet.id))).toEqual({ status: 403, message: expect.stringContaining(String(sheet.id)) });
    const processing = randomUUID();
    await env.ctx.db('datasets').insert({
      id: processing, account_id: owner.accountId, slug: 'pending', name: 'pending', status: 'processing',
      // A lease far ahead keeps this file's worker off the row, so it stays `processing`.
      upload_key: 'uploads/none', upload_format: 'csv', upload_bytes: 1, locked_until: new Date(Date.now() + 3_600_000),
    });
    expect(await refusal(owner.accountId, processing)).toEqual({ status: 403, message: expect.stringContaining(processing) });
    expect(await refusal(owner.accountId, 'pending')).toEqual({ status: 403, message: expect.stringContaining('pending') });
  });
});

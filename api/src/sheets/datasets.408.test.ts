/**
 * The search deadline (SPEC Limits: 30 s, also sheet search) through the route: the runner
 * interrupts the search and the API answers 408 QUERY_TIMEOUT. The runner here has a 100 ms limit
 * and the sheet is a ready 6-million-row Parquet seeded in the store and the table directly.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { tempPath, writeParquet } from '@uda/test-support/runner-fixtures';
import type { TestApi } from '@uda/test-support/api-harness';
import { search } from '../../test/support/sheets-client.ts';
import { type SheetEnv, openSheetEnv } from '@uda/test-support/sheets-env';

let env: SheetEnv;
let api: TestApi;
beforeAll(async () => {
  env = await openSheetEnv('sheets408', { QUERY_TIMEOUT_MS: '100' });
  api = await env.start();
});
afterAll(async () => {
  await api.close();
  await env.close();
});

describe('sheet search deadline', () => {
  it('408 QUERY_TIMEOUT with the flat body when the search outlives the limit', async () => {
    const { accountId, apiKey } = await api.account();
    const id = randomUUID();
    const key = `sheets/${accountId}/${id}/1.parquet`;
    await env.bucket.store.putFile(key, await writeParquet(tempPath('big.parquet'), `SELECT range AS id, 'text ' || range AS t FROM range(6000000)`));
    await env.ctx.db('datasets').insert({
      id, account_id: accountId, slug: 'big', name: 'big', status: 'ready', row_count: 6_000_000,
      columns: JSON.stringify([{ name: 'id', type: 'BIGINT' }, { name: 't', type: 'VARCHAR' }]),
      upload_key: 'uploads/seeded', upload_format: 'parquet', upload_bytes: 1, parquet_key: key,
    });
    const res = await search(api, apiKey, 'big', 'no such text');
    expect(res).toEqual({ status: 408, body: { status: 'error', message: expect.stringMatching(/limit and was stopped/), code: 'QUERY_TIMEOUT' } });
  });
});

/**
 * The embedded default (no DATABASE_URL): PGlite, a local object store and the sheets worker in
 * the API process, wired in as the start script does (`scripts/api.ts`). An upload through the route becomes `ready`, which proves the worker's
 * `SELECT … FOR UPDATE SKIP LOCKED` claim runs on PGlite.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { parseApiConfig } from '@uda/api/config';
import { startApi } from '@uda/api/main';
import { startEmbeddedSheetsWorker } from '@uda/exporter/sheets/embedded';

describe('embedded sheets worker', () => {
  it('ingests an upload on PGlite in the API process', async () => {
    const config = parseApiConfig({ DATA_DIR: mkdtempSync(join(tmpdir(), 'uda-embedded-')), PORT: '0', METRICS_PORT: '0', ADMIN_PORT: '0', LOG_LEVEL: 'silent' });
    const running = await startApi(config, {}, { startSheetsWorker: startEmbeddedSheetsWorker });
    try {
      const headers = { authorization: `Bearer ${running.demoKey}` };
      const body = new FormData();
      body.set('file', new Blob(['city,pop\nOslo,709000\n']), 'cities.csv');
      const created = (await (await fetch(`${running.url}/api/v1/datasets`, { method: 'POST', headers, body })).json()) as { id: string };
      let record: Record<string, unknown> = {};
      for (let i = 0; i < 300 && record.status !== 'ready' && record.status !== 'failed'; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        record = (await (await fetch(`${running.url}/api/v1/datasets/${created.id}`, { headers })).json()) as Record<string, unknown>;
      }
      expect(record).toMatchObject({ status: 'ready', row_count: 1, slug: 'cities', columns: [{ name: 'city', type: 'VARCHAR' }, { name: 'pop', type: 'BIGINT' }] });
    } finally {
      await running.close();
    }
  });
});

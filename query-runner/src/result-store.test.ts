/**
 * Concurrent conversions of one stored result: many requests ask for the CSV and JSON
 * of the same Parquet at once, in one runner and in two runners sharing a scratch folder. Each
 * conversion owns its scratch files, so none reads a file another has moved or removed; all get
 * the same stored object, and no scratch file is left behind.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { LocalFolderStore } from '@uda/shared/object-store';
import type { ResultMeta } from '@uda/shared/runner-contract';
import { writeParquet } from '@uda/test-support/runner-fixtures';
import { ResultStore, resultKey } from './result-store.ts';
import { createResultWriter, type ResultWriter } from './result-writer.ts';

const ROWS = 2_000;
let dir: string;
let store: LocalFolderStore;
let writer: ResultWriter;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'uda-result-store-'));
  store = new LocalFolderStore(join(dir, 'store'));
  writer = await createResultWriter();
});
afterAll(async () => {
  writer.close();
  await rm(dir, { recursive: true, force: true });
});

/** A stored result with only its Parquet, as a run leaves it. */
async function storedResult(): Promise<ResultMeta> {
  const queryId = randomUUID();
  const createdAt = Date.now();
  const local = await writeParquet(join(dir, `${queryId}.parquet`), `SELECT i AS id, 'title ' || i AS title FROM range(${ROWS}) t(i)`);
  const key = resultKey(queryId, createdAt, 'parquet');
  const info = await store.putFile(key, local);
  return {
    queryId,
    rowCount: ROWS,
    truncated: false,
    sqlExecuted: 'SELECT …',
    columns: [
      { name: 'id', type: 'BIGINT' },
      { name: 'title', type: 'VARCHAR' },
    ],
    tables: [],
    rowsBySource: {},
    dataVersion: 'v1',
    createdAt: new Date(createdAt).toISOString(),
    expiresAt: createdAt + 300_000,
    objects: { parquet: { key, size: info.size, etag: info.etag, contentType: 'application/vnd.apache.parquet' } },
  };
}

async function newScratch(): Promise<string> {
  const scratch = join(dir, `scratch-${randomUUID()}`);
  await mkdir(scratch);
  return scratch;
}

const storeOn = (scratchDir: string) => new ResultStore({ store, writer, scratchDir, maxBytes: 64 * 1024 * 1024 });

describe('ResultStore.produce under concurrency', () => {
  it('12 concurrent CSV and JSON conversions in one runner and in two sharing a scratch folder all succeed, alike, leaving no scratch file', async () => {
    const meta = await storedResult();
    const scratch = await newScratch();
    // Two stores on one folder stand for two runner processes of one pod sharing a volume.
    const runners = [storeOn(scratch), storeOn(scratch)];
    const produced = await Promise.all(
      Array.from({ length: 12 }, (_, i) => (runners[i % 2] as ResultStore).produce(meta, i % 3 === 0 ? 'json' : 'csv')),
    );
    const csv = produced.filter((_m, i) => i % 3 !== 0).map((m) => m.objects.csv);
    const json = produced.filter((_m, i) => i % 3 === 0).map((m) => m.objects.json);
    expect(new Set(csv.map((o) => o?.key)).size).toBe(1);
    expect(new Set(json.map((o) => o?.key)).size).toBe(1);
    const rows = JSON.parse((await runners[0]!.readRows(json[0]!)).toString('utf8')) as unknown[];
    expect(rows).toHaveLength(ROWS);
    const stored = await store.get(csv[0]!.key);
    let text = '';
    for await (const chunk of stored!.body) text += Buffer.from(chunk as Uint8Array).toString('utf8');
    expect(text.trim().split('\n')).toHaveLength(ROWS + 1);
    expect(await readdir(scratch)).toEqual([]);
  });
});

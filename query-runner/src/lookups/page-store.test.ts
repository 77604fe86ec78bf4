/**
 * The page store answers exactly what the page SQL answers: for documents of every stored source,
 * the rows read at their offsets equal the page SQL's rows converted as query results are, field
 * for field and in the same key order, so the lookup result shapes are the SQL's.
 */
import { INTEGER, LIST, listValue, type DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { STORED_SOURCES } from '@uda/shared/runner-contract';
import { startExportedRunner, type ExportedRunner } from '../../test/exported-runner.ts';
import { jsonValue } from '@uda/shared/duckdb';
import { readPageJson } from './page-store.ts';
import { searchIndexesOf, type SearchIndexes } from './search-index.ts';
import { PAGE_DOC, pageSql } from '@uda/search/index';

let served: ExportedRunner;
let connection: DuckDBConnection;
let indexes: SearchIndexes;
let release: () => void;

beforeAll(async () => {
  served = await startExportedRunner('page-store');
  const lease = served.runner.databases.lease()!;
  release = lease.release;
  connection = await lease.database.instance.connect();
  indexes = searchIndexesOf(lease.database)!;
});

afterAll(async () => {
  connection.closeSync();
  release();
  await served.stop();
});

/** The page SQL's rows for `docs`, in their order, without the document numbers. */
async function sqlRows(source: (typeof STORED_SOURCES)[number], docs: number[]): Promise<Record<string, unknown>[]> {
  const reader = await connection.runAndReadAll(`WITH ranked AS (SELECT unnest($1::INTEGER[]) AS doc) ${pageSql(source)} ORDER BY list_position($1, r.doc)`, [listValue(docs)], [LIST(INTEGER)]);
  return reader.convertRowObjects(jsonValue).map(({ [PAGE_DOC]: _doc, ...row }) => row);
}

describe('the page store', () => {
  for (const source of STORED_SOURCES) {
    it(`${source}: rows equal the page SQL's rows, key order included`, async () => {
      const documents = indexes.get(source)!.documents;
      // The first, last and spread documents, out of order, as a ranking returns them.
      const docs = [...new Set([documents, 1, Math.ceil(documents / 2), Math.ceil(documents / 3), 2].filter((d) => d >= 1 && d <= documents))];
      const stored = JSON.parse(readPageJson(indexes.pages(source)!, docs).toString('utf8')) as Record<string, unknown>[];
      const expected = await sqlRows(source, docs);
      expect(stored).toEqual(expected);
      expect(stored.map((row) => Object.keys(row))).toEqual(expected.map((row) => Object.keys(row)));
    });
  }
});

/**
 * The index built in many slices of documents and many ranges of terms is the index built in one:
 * every output table of every stored source, rows and row order, on the bundled sample data.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { allTableSpecs } from '../sources.ts';
import { loadTable } from './database.ts';
import { buildSearchIndex, SEARCH_SPECS, searchTable, type IndexSlicing, type SearchSpec } from '@uda/search/index';

const DATA = join(import.meta.dirname, '..', '..', 'data');
const KINDS = ['docs', 'postings', 'titles', 'stats', 'idterms'] as const;
const ONE_SHOT: IndexSlicing = { documents: Number.MAX_SAFE_INTEGER, rows: Number.MAX_SAFE_INTEGER };
/** Slices and ranges: enough to merge several runs and cut several ranges, few enough to build quickly. */
const PIECES = 5;

let workDir: string;
let instance: DuckDBInstance;
let connection: DuckDBConnection;

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'uda-index-slices-'));
  instance = await DuckDBInstance.create(':memory:');
  connection = await instance.connect();
  const needed = new Set(SEARCH_SPECS.flatMap((spec) => spec.tables));
  for (const table of await allTableSpecs(DATA)) {
    if (needed.has(table.name)) await loadTable(connection, table, workDir);
  }
});

afterAll(async () => {
  connection.closeSync();
  instance.closeSync();
  await rm(workDir, { recursive: true, force: true });
});

async function rows(sql: string): Promise<unknown[]> {
  return (await connection.runAndReadAll(sql)).getRowObjectsJson();
}

/** Every output table's rows in stored order, then the tables dropped for the next build. */
async function built(spec: SearchSpec, slicing: IndexSlicing): Promise<Record<string, unknown[]>> {
  await (await buildSearchIndex(connection, spec, { slicing })).release();
  const tables: Record<string, unknown[]> = {};
  for (const kind of KINDS) {
    const table = searchTable(spec.source, kind);
    tables[kind] = await rows(`SELECT * FROM "${table}" ORDER BY rowid`);
    await connection.run(`DROP TABLE "${table}"`);
  }
  return tables;
}

describe('the index built in slices', () => {
  for (const spec of SEARCH_SPECS) {
    it(`${spec.source}: equals the index built in one slice and one range`, async () => {
      const oneShot = await built(spec, ONE_SHOT);
      // A few documents per slice and a few titles per range (postings, more numerous, get more ranges).
      const tiny = { documents: Math.ceil(oneShot.docs!.length / PIECES), rows: Math.ceil(oneShot.titles!.length / PIECES) };
      expect(tiny.documents).toBeGreaterThan(1);
      expect(await built(spec, tiny)).toEqual(oneShot);
    });
  }

  it('leaves no scratch table behind', async () => {
    await built(SEARCH_SPECS[0]!, { documents: 100, rows: 100 });
    expect(await rows('SELECT table_name FROM duckdb_tables() WHERE temporary')).toEqual([]);
  });
});

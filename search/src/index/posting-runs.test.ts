/**
 * The run files and their merge: terms in UTF-8 byte order (DuckDB's VARCHAR order, which
 * JavaScript's own string order is not for characters past U+D800), a term's postings summed per
 * document, and a term found in several runs given its runs' postings in run (document) order.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { IN_TEXT, PRIMARY, SlicePostings } from './posting-runs.ts';
import { mergeTitles } from './posting-merge.ts';
import { textAt, textCount } from './sorted-texts.ts';

let dir: string;
let instance: DuckDBInstance;
let connection: DuckDBConnection;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'uda-posting-runs-'));
  instance = await DuckDBInstance.create(':memory:');
  connection = await instance.connect();
});

afterAll(async () => {
  connection.closeSync();
  instance.closeSync();
  await rm(dir, { recursive: true, force: true });
});

/** A slice of `[term, doc]` occurrences written as a run. */
async function run(name: string, occurrences: [string, number][]): Promise<string> {
  const slice = new SlicePostings();
  for (const [term, doc] of occurrences) slice.add(term, doc, 1, PRIMARY | IN_TEXT);
  const path = join(dir, name);
  await slice.writeRun(path);
  return path;
}

/** The merged runs as the (term, doc) rows of a fresh table, in stored order, and as the returned pairs. */
async function merged(table: string, paths: string[]): Promise<{ rows: unknown[]; pairs: [string, number][] }> {
  await connection.run(`CREATE TABLE ${table} (title VARCHAR, doc INTEGER)`);
  const pairs = await mergeTitles(paths, connection, table);
  const rows = (await connection.runAndReadAll(`SELECT title, doc FROM ${table} ORDER BY rowid`)).getRows();
  return { rows, pairs: Array.from({ length: textCount(pairs.texts) }, (_, i) => [textAt(pairs.texts, i), pairs.docs[i]!]) };
}

describe('run files', () => {
  it('order their terms by UTF-8 bytes, as DuckDB orders them', async () => {
    // U+FFFF sorts after a surrogate pair (U+1F600) in UTF-16, before it in UTF-8.
    const terms = ['b', '\u{1F600}', '\uffff', 'a', 'é'];
    const { pairs } = await merged('utf8_order', [await run('utf8.bin', terms.map((term, i) => [term, i + 1]))]);
    const reader = await connection.runAndReadAll(`SELECT t FROM unnest([${terms.map((t) => `'${t}'`).join(', ')}]) AS u(t) ORDER BY t`);
    expect(pairs.map(([term]) => term)).toEqual(reader.getRows().map(([t]) => t));
  });

  it('keep one posting per term and document, and merge a term of several runs in run order', async () => {
    const first = await run('first.bin', [['milk', 1], ['milk', 1], ['egg', 2], ['milk', 3]]);
    const second = await run('second.bin', [['milk', 4], ['cheese', 5], ['egg', 6]]);
    const { rows, pairs } = await merged('several_runs', [first, second]);
    const expected = [['cheese', 5], ['egg', 2], ['egg', 6], ['milk', 1], ['milk', 3], ['milk', 4]];
    expect(pairs).toEqual(expected);
    expect(rows).toEqual(expected);
  });
});

/**
 * The search index the exporter builds for the lookups: the terms agree with the runner's
 * TypeScript tokeniser, and the tables hold what BM25 needs, on a small hand-built table.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { sourceOfTable } from '@uda/shared/catalog';
import { SEARCH_TABLE_PREFIX } from '@uda/shared/catalog';
import { searchTerms, searchTermsSql } from '../vocabulary/terms.ts';
import { searchTable } from './table-names.ts';
import { SEARCH_SPECS } from './specs.ts';
import { buildSearchIndexes } from './tables.ts';
import { BM25 } from './spec.ts';

let instance: DuckDBInstance;
let connection: DuckDBConnection;

beforeEach(async () => {
  instance = await DuckDBInstance.create(':memory:');
  connection = await instance.connect();
});

afterEach(() => {
  connection.closeSync();
  instance.closeSync();
});

async function rows(sql: string): Promise<Record<string, unknown>[]> {
  return (await connection.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[];
}

describe('search terms', () => {
  const texts = [
    'Doña Ana County, New Mexico',
    'Œuvres complètes de Molière',
    'Zürich; São Paulo — İstanbul',
    'Ελληνικά κείμενα and 中文 text',
    "Uncle Tom's Cabin (1852), vol. 2",
    'U-Net: 1505.04597',
    '  %__\\  ',
    "McDONALD'S, Strawberry Sundae; rock 'n' roll",
    'Kellogg\u2019s; Coca-Cola',
  ];

  it('are the same in DuckDB (the index) and in TypeScript (the query)', async () => {
    for (const text of texts) {
      const reader = await connection.runAndReadAll(`SELECT list_filter(${searchTermsSql('t')}, lambda x: x <> '') AS terms FROM (SELECT ?::VARCHAR AS t)`, [text]);
      const [row] = reader.getRowObjectsJson();
      expect({ text, terms: row!.terms }).toEqual({ text, terms: searchTerms(text) });
    }
  });

  it('fold case and accents and split on anything but letters and digits', () => {
    expect(searchTerms('Doña ANA, Zürich')).toEqual(['dona', 'ana', 'zurich']);
    expect(searchTerms('%_ -')).toEqual([]);
  });

  it('join the letters an apostrophe separates, as people type them with or without it', () => {
    expect(searchTerms("McDonald's")).toEqual(['mcdonalds']);
    expect(searchTerms('Kellogg\u2019s Coca-Cola')).toEqual(['kelloggs', 'coca', 'cola']);
  });
});

describe('buildSearchIndexes', () => {
  beforeEach(async () => {
    await connection.run(`CREATE TABLE gutenberg (text_id INTEGER, title VARCHAR,
      authors STRUCT(name VARCHAR, dates VARCHAR, role VARCHAR)[], subjects VARCHAR[], bookshelves VARCHAR[])`);
    await connection.run(`INSERT INTO gutenberg VALUES
      (132, 'The Art of War', [{'name': 'Sunzi', 'dates': NULL, 'role': 'Author'}], ['Military art and science'], ['War']),
      (2, 'War and Peace and War', [{'name': 'Tolstoy, Leo', 'dates': NULL, 'role': 'Author'}], [], []),
      (7, 'Warden', [], ['Prisons'], [])`);
  });

  it('indexes only the sources whose tables were built', async () => {
    expect(await buildSearchIndexes(connection, new Set(['gutenberg']))).toEqual(['gutenberg']);
    const tables = (await rows("SELECT table_name FROM duckdb_tables() WHERE NOT temporary ORDER BY table_name")).map((r) => r.table_name);
    expect(tables).toEqual(['_search_gutenberg_docs', '_search_gutenberg_idterms', '_search_gutenberg_postings', '_search_gutenberg_stats', '_search_gutenberg_titles', 'gutenberg']);
  });

  it('numbers documents in the tie order and weights a title term over a subject term', async () => {
    await buildSearchIndexes(connection, new Set(['gutenberg']));
    expect(await rows(`SELECT doc, text_id FROM ${searchTable('gutenberg', 'docs')} ORDER BY doc`)).toEqual([
      { doc: 1, text_id: 2 },
      { doc: 2, text_id: 7 },
      { doc: 3, text_id: 132 },
    ]);
    // "war": twice in the title of doc 1 (weight 3 each); once in the title and once on a bookshelf (0.5) in doc 3.
    expect(await rows(`SELECT doc, tf, in_primary FROM ${searchTable('gutenberg', 'postings')} WHERE term = 'war' ORDER BY doc`)).toEqual([
      { doc: 1, tf: 6, in_primary: true },
      { doc: 3, tf: 3.5, in_primary: true },
    ]);
    expect(await rows(`SELECT doc, in_primary FROM ${searchTable('gutenberg', 'postings')} WHERE term = 'prisons'`)).toEqual([{ doc: 2, in_primary: false }]);
    expect(await rows(`SELECT documents FROM ${searchTable('gutenberg', 'stats')}`)).toEqual([{ documents: '3' }]);
  });

  it('stores each posting with its document length normalisation, and the postings sorted by term', async () => {
    await buildSearchIndexes(connection, new Set(['gutenberg']));
    const postings = searchTable('gutenberg', 'postings');
    const [{ sorted }] = (await rows(`SELECT bool_and(term >= prev) AS sorted FROM (SELECT term, lag(term, 1, '') OVER (ORDER BY rowid) AS prev FROM ${postings})`)) as [{ sorted: boolean }];
    expect(sorted).toBe(true);
    const lengths = await rows(`SELECT doc, sum(tf) AS len, any_value(norm) AS norm, count(DISTINCT norm) AS norms FROM ${postings} GROUP BY doc ORDER BY doc`);
    const average = lengths.reduce((sum, r) => sum + Number(r.len), 0) / lengths.length;
    for (const r of lengths) {
      expect(r.norms).toBe('1');
      expect(Number(r.norm)).toBeCloseTo(BM25.k1 * (1 - BM25.b + (BM25.b * Number(r.len)) / average), 9);
    }
  });

  it('keeps the primary texts as space-joined terms for exact and prefix matches', async () => {
    await buildSearchIndexes(connection, new Set(['gutenberg']));
    expect(await rows(`SELECT title, doc FROM ${searchTable('gutenberg', 'titles')} ORDER BY title, doc`)).toEqual([
      { title: 'sunzi', doc: 3 },
      { title: 'the art of war', doc: 3 },
      { title: 'tolstoy leo', doc: 1 },
      { title: 'war and peace and war', doc: 1 },
      { title: 'warden', doc: 2 },
    ]);
  });
});

describe('page columns', () => {
  it('keep the page columns from other tables in docs, keyed by the document number', async () => {
    await connection.run('CREATE TABLE food (fdc_id INTEGER, description VARCHAR, category VARCHAR)');
    await connection.run("INSERT INTO food VALUES (1, 'Butter, salted', 'Dairy'), (2, 'Water', 'Beverages')");
    await connection.run('CREATE TABLE food_nutrients (fdc_id INTEGER, nutrient_id INTEGER, amount DOUBLE)');
    await connection.run('INSERT INTO food_nutrients VALUES (1, 1008, 717), (1, 1004, 81.11), (1, 1090, 24)');
    expect(await buildSearchIndexes(connection, new Set(['food', 'food_nutrients']))).toEqual(['food']);
    expect(await rows(`SELECT * FROM ${searchTable('food', 'docs')} ORDER BY doc`)).toEqual([
      { doc: 1, fdc_id: 2, energy_kcal: null, protein_g: null, fat_g: null, carbohydrate_g: null },
      { doc: 2, fdc_id: 1, energy_kcal: 717, protein_g: null, fat_g: 81.11, carbohydrate_g: null },
    ]);
    const constraints = await rows(`SELECT constraint_type, constraint_column_names FROM duckdb_constraints() WHERE table_name = '${searchTable('food', 'docs')}'`);
    expect(constraints).toContainEqual({ constraint_type: 'PRIMARY KEY', constraint_column_names: ['doc'] });
  });
});

describe('index table names', () => {
  it('never name a catalog table, so SQL over them is billed to no source', () => {
    for (const { source } of SEARCH_SPECS) {
      for (const kind of ['docs', 'postings', 'titles', 'stats'] as const) {
        const table = searchTable(source, kind);
        expect(table.startsWith(SEARCH_TABLE_PREFIX)).toBe(true);
        expect(sourceOfTable(table)).toBeUndefined();
      }
    }
  });
});

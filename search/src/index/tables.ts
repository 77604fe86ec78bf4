/**
 * The stored sources' search index, built into `service.db` after the source tables: the same
 * plain tables DuckDB's `fts` extension would build (it cannot be loaded here), so the runner can
 * rank lookups with BM25 reading only the posting lists of the query's terms.
 *
 * Per source (`searchTable` names them; the `_search_` prefix never collides with a catalog table,
 * so `sourceOfTable` maps them to no source and they are not billed; they are not exported as files):
 * - `docs(doc, key…, page column…)`: one row per document, primary key `doc`; `doc` numbers the
 *   documents in the source's tie order, so "equal score" ties break on `doc`. The page columns are
 *   what a lookup page shows from the source's other tables (a food's nutrients, a paper's
 *   repositories, a company's recent filings), computed here once, so a lookup reads them for its
 *   page's documents by key instead of scanning those tables on every request.
 * - `postings(term, doc, tf, in_primary, norm)`, sorted by term so a term's postings are a few row
 *   groups: `tf` is the field-weighted term frequency (a title word counts more than an abstract
 *   word), `in_primary` whether the term is a whole word of a primary field, and `norm` the document's
 *   BM25 length normalisation `k1 · (1 − b + b · len / avg_len)`, stored per posting so that
 *   ranking never reads the document table.
 * - `titles(title, doc)`: the primary texts as space-joined terms, sorted, for exact and prefix matches.
 * - `stats(documents)`: the collection size for the IDF.
 * - `idterms(term)`: the terms found only in id fields (tickers, arXiv ids), sorted: the runner
 *   never counts a typo on them, as an id is typed exactly or not at all.
 *
 * The postings are built in one pass (`posting-pass.ts`): one scan of the documents' terms, in
 * `doc` order, is summed per slice of documents into a run file sorted by term; the runs are then
 * merged (`posting-merge.ts`) into the `postings` and `idterms` tables and, at the same time, the
 * runner's arrays, which the build returns so the runner files never read the tables again. Memory
 * is bounded by the slice sizes (`INDEX_SLICING`), not by a source's vocabulary; the arrays
 * themselves are the index's size (about 9 bytes per posting).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { docsSql, documentTextsSql, dropScratchSql, outputTablesSql, SCRATCH, stageSql } from './tables-sql.ts';
import type { SearchSpec } from './spec.ts';
import { SEARCH_SPECS } from './specs.ts';
import { writePostingRuns } from './posting-pass.ts';
import { mergePostings, mergeTitles, type BuiltIndex } from './posting-merge.ts';
import { searchTable } from './table-names.ts';

/** How a source's build is cut up: the bounds of its memory. */
export interface IndexSlicing {
  /** Documents whose postings are summed together into one run (a scholarly abstract has a few hundred terms). */
  readonly documents: number;
  /** Postings in one run at most. */
  readonly rows: number;
}

export const INDEX_SLICING: IndexSlicing = { documents: 50_000, rows: 2_000_000 };

export interface BuildOptions {
  readonly slicing?: IndexSlicing;
  /** Where the run files are written (in a folder made inside it, removed at the end); the system's temporary folder by default. */
  readonly scratchDir?: string;
}

/**
 * Builds one source's index from its tables, which must all be in the database; returns what the
 * runner's arrays are made from (the postings' columns in files of the scratch folder: call `release`).
 */
export async function buildSearchIndex(connection: DuckDBConnection, spec: SearchSpec, options: BuildOptions = {}): Promise<BuiltIndex> {
  const slicing = options.slicing ?? INDEX_SLICING;
  const run = async (statements: readonly string[]) => {
    for (const sql of statements) await connection.run(sql);
  };
  const runDir = await mkdtemp(join(options.scratchDir ?? tmpdir(), `index-${spec.source}-`));
  const release = () => rm(runDir, { recursive: true, force: true });
  try {
    await run([stageSql(spec), ...docsSql(spec), ...outputTablesSql(spec)]);
    const documents = await countDocuments(connection);
    const runs = await writePostingRuns(connection, spec, documentTextsSql(spec), documents, { documents: slicing.documents, postings: slicing.rows }, runDir);
    const postings = await mergePostings(runs.paths, {
      connection, columnsDir: runDir, postingsTable: searchTable(spec.source, 'postings'), idtermsTable: searchTable(spec.source, 'idterms'),
      documents, norms: runs.norms, postings: runs.postings,
    });
    const titles = await mergeTitles(runs.titlePaths, connection, searchTable(spec.source, 'titles'));
    await Promise.all([...runs.paths, ...runs.titlePaths].map((path) => rm(path)));
    return { postings, titles, release };
  } catch (error) {
    await release();
    throw error;
  } finally {
    await run(dropScratchSql());
  }
}

async function countDocuments(connection: DuckDBConnection): Promise<number> {
  const reader = await connection.runAndReadAll(`SELECT count(*)::BIGINT AS n FROM ${SCRATCH.stage}`);
  return Number(reader.getRowObjects()[0]!.n);
}

/** Builds the index of every stored source whose tables are all in the database. Returns the sources indexed. */
export async function buildSearchIndexes(connection: DuckDBConnection, builtTables: ReadonlySet<string>): Promise<string[]> {
  const indexed: string[] = [];
  for (const spec of SEARCH_SPECS) {
    if (!spec.tables.every((table) => builtTables.has(table))) continue;
    await (await buildSearchIndex(connection, spec)).release();
    indexed.push(spec.source);
  }
  return indexed;
}

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
 * The build's SQL (`search-index-sql.ts`) works one slice of documents, then one range of terms, at
 * a time, so that its memory is bounded by the slice sizes (`INDEX_SLICING`), not by a source's
 * vocabulary.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import {
  docsSql, dropScratchSql, outputTablesSql, SCRATCH, scratchTablesSql, sliceSql, stageSql, termRangeInserts, titleRangeInsert,
} from './tables-sql.ts';
import type { SearchSpec } from './spec.ts';
import { SEARCH_SPECS } from './specs.ts';
import { insertByRanges } from './sorted-runs.ts';

/** How a source's build is cut up: the bounds of its statements' memory. */
export interface IndexSlicing {
  /** Documents whose terms are aggregated together (a scholarly abstract has a few hundred terms). */
  readonly documents: number;
  /** Rows sorted together when the runs are merged into the output tables. */
  readonly rows: number;
}

export const INDEX_SLICING: IndexSlicing = { documents: 50_000, rows: 2_000_000 };

/** Builds one source's index from its tables, which must all be in the database. */
export async function buildSearchIndex(connection: DuckDBConnection, spec: SearchSpec, slicing: IndexSlicing = INDEX_SLICING): Promise<void> {
  const run = async (statements: readonly string[]) => {
    for (const sql of statements) await connection.run(sql);
  };
  try {
    await run([stageSql(spec), ...docsSql(spec), ...scratchTablesSql(spec)]);
    const documents = await countDocuments(connection);
    for (let first = 1; first <= documents; first += slicing.documents) await run(sliceSql(spec, first, first + slicing.documents - 1));
    await run(outputTablesSql(spec));
    await insertByRanges(connection, { table: SCRATCH.terms, key: 'term', rowsPerRange: slicing.rows }, termRangeInserts(spec));
    await insertByRanges(connection, { table: SCRATCH.titles, key: 'title', rowsPerRange: slicing.rows }, [titleRangeInsert(spec)]);
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
    await buildSearchIndex(connection, spec);
    indexed.push(spec.source);
  }
  return indexed;
}

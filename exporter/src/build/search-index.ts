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
} from './search-index-sql.ts';
import type { SearchSpec } from './search-spec.ts';
import { insertByRanges } from './sorted-runs.ts';

export const SEARCH_SPECS: readonly SearchSpec[] = [
  {
    source: 'gutenberg',
    tables: ['gutenberg'],
    documents: `SELECT text_id, title,
        array_to_string(list_transform(authors, lambda a: a.name), '; ') AS author_names,
        array_to_string(subjects, '; ') AS subjects, array_to_string(bookshelves, '; ') AS bookshelves
      FROM gutenberg`,
    order: 'text_id',
    keys: ['text_id'],
    fields: [
      { column: 'title', weight: 3, primary: true },
      { column: 'author_names', weight: 2, primary: true },
      { column: 'subjects', weight: 1 },
      { column: 'bookshelves', weight: 0.5 },
    ],
    titles: ['title', 'author_names'],
  },
  {
    source: 'census',
    tables: ['census_states', 'census_counties'],
    // `short` is the state or county name alone ("York County"), so it can match exactly or as a prefix.
    documents: `SELECT name, name AS short, popestimate2023 AS population FROM census_states
      UNION ALL
      SELECT ctyname || ', ' || stname, ctyname, popestimate2019 FROM census_counties WHERE sumlev = '050'`,
    order: 'population DESC NULLS LAST, name',
    keys: ['name'],
    fields: [{ column: 'name', weight: 1, primary: true }],
    titles: ['short', 'name'],
  },
  {
    source: 'food',
    tables: ['food', 'food_nutrients'],
    documents: 'SELECT fdc_id, description, category FROM food',
    order: 'length(description), fdc_id',
    keys: ['fdc_id'],
    pageColumns: `SELECT fdc_id,
        max(amount) FILTER (WHERE nutrient_id = 1008) AS energy_kcal,
        max(amount) FILTER (WHERE nutrient_id = 1003) AS protein_g,
        max(amount) FILTER (WHERE nutrient_id = 1004) AS fat_g,
        max(amount) FILTER (WHERE nutrient_id = 1005) AS carbohydrate_g
      FROM food_nutrients WHERE nutrient_id IN (1003, 1004, 1005, 1008) GROUP BY fdc_id`,
    fields: [
      { column: 'description', weight: 2, primary: true },
      { column: 'category', weight: 1 },
    ],
    titles: ['description'],
  },
  {
    source: 'pwc',
    tables: ['pwc_papers', 'pwc_links'],
    documents: `SELECT paper_url, date, title, arxiv_id, abstract,
        array_to_string(authors, '; ') AS authors, array_to_string(tasks, '; ') AS tasks
      FROM pwc_papers`,
    order: 'date DESC NULLS LAST, paper_url',
    keys: ['paper_url'],
    pageColumns: `SELECT paper_url,
        list({'repo_url': repo_url, 'is_official': is_official, 'framework': framework} ORDER BY is_official DESC, repo_url) AS repositories
      FROM pwc_links GROUP BY paper_url`,
    fields: [
      { column: 'title', weight: 3, primary: true },
      // An arXiv id ("1706.03762") is found as its terms and, exactly, through `titles`.
      { column: 'arxiv_id', weight: 1, id: true },
      { column: 'authors', weight: 1.5 },
      { column: 'tasks', weight: 1 },
      { column: 'abstract', weight: 1 },
    ],
    titles: ['title', 'arxiv_id'],
  },
  {
    source: 'sec',
    tables: ['sec_companies', 'sec_filings'],
    // One document per company (CIK), not per ticker: a company with several share classes is one
    // result. `ticker` is the first listed in company_tickers.json (the main class; rows are
    // inserted in the file's order, so `rowid` is that order), `tickers` all of them.
    documents: `SELECT cik, first(ticker ORDER BY rowid) AS ticker, string_agg(ticker, ' ' ORDER BY rowid) AS tickers,
        list(ticker ORDER BY rowid) AS ticker_list, first(title ORDER BY rowid) AS title
      FROM sec_companies GROUP BY cik`,
    order: 'length(title), ticker',
    keys: ['cik'],
    // The company's shown columns, and its five latest filings (a top 5 per company, not a list of every filing).
    pageColumns: `SELECT c.cik, c.ticker, c.tickers, c.title, f.recent_filings
      FROM (SELECT cik, first(ticker ORDER BY rowid) AS ticker, list(ticker ORDER BY rowid) AS tickers, first(title ORDER BY rowid) AS title
            FROM sec_companies GROUP BY cik) c
      LEFT JOIN (
        SELECT cik, list({'form_type': form_type, 'date_filed': date_filed, 'accession_number': accession_number}
                         ORDER BY date_filed DESC, accession_number) AS recent_filings
        FROM (SELECT cik, form_type, date_filed, accession_number FROM sec_filings
              QUALIFY row_number() OVER (PARTITION BY cik ORDER BY date_filed DESC, accession_number) <= 5)
        GROUP BY cik) f ON f.cik = c.cik`,
    fields: [
      { column: 'title', weight: 1, primary: true },
      // A ticker ("TSLA") is found as a term and, exactly, through `titles`.
      { column: 'tickers', weight: 1, counted: false, id: true },
    ],
    titles: ['title'],
    titleLists: ['ticker_list'],
  },
];

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

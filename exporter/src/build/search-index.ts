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
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { searchTable, searchTermsSql } from '@uda/shared/search';
import { quoteIdent } from './database.ts';

/** BM25 parameters (the usual defaults, as in Lucene and DuckDB's `fts`). */
export const BM25 = { k1: 1.2, b: 0.75 } as const;

interface SearchField {
  readonly column: string;
  readonly weight: number;
  /** A whole-word match here ranks ahead of matches elsewhere (the lookup's "tier 2"). */
  readonly primary?: boolean;
  /**
   * False: the field's terms are found but do not lengthen the document in BM25 (a company's
   * share classes do not make its name count for less than a one-class company's).
   */
  readonly counted?: boolean;
  /** An identifier (a ticker, an arXiv id): its terms get no typos. */
  readonly id?: boolean;
}

export interface SearchSpec {
  readonly source: string;
  /** Source tables the documents read; the index is skipped when one was not built. */
  readonly tables: readonly string[];
  /** A SELECT with the key columns and one text column per field. */
  readonly documents: string;
  /** Tie order among equally ranked documents. */
  readonly order: string;
  /** Columns kept in `docs` to join a page back to the source tables. */
  readonly keys: readonly string[];
  /** The page columns kept in `docs`: a SELECT with the key columns and one column per page column. */
  readonly pageColumns?: string;
  readonly fields: readonly SearchField[];
  /** Fields whose whole text is compared with the keywords for exact and prefix matches. */
  readonly titles: readonly string[];
  /** List fields each of whose items is compared so (a company's tickers). */
  readonly titleLists?: readonly string[];
}

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

const STAGE = '_search_stage';
const TERMS = '_search_terms';

/** Every document's number and keys, with the page columns when the source has some. */
function docsSelect(spec: SearchSpec): string {
  const keys = spec.keys.map(quoteIdent);
  if (!spec.pageColumns) return `SELECT doc, ${keys.join(', ')} FROM ${STAGE} ORDER BY doc`;
  return `SELECT s.doc, ${keys.map((k) => `s.${k}`).join(', ')}, page.* EXCLUDE (${keys.join(', ')})
    FROM ${STAGE} s LEFT JOIN (${spec.pageColumns}) page ON ${keys.map((k) => `page.${k} = s.${k}`).join(' AND ')}
    ORDER BY s.doc`;
}

/** The `CREATE` statements for one source's index, in order. Temporary tables are dropped at the end. */
export function searchIndexSql(spec: SearchSpec): string[] {
  const t = (kind: Parameters<typeof searchTable>[1]) => quoteIdent(searchTable(spec.source, kind));
  const fieldTerms = spec.fields.map(
    (f, i) => `SELECT doc, ${i} AS field, unnest(${searchTermsSql(quoteIdent(f.column))}) AS term FROM ${STAGE}`,
  );
  const weight = `CASE field ${spec.fields.map((f, i) => `WHEN ${i} THEN ${f.weight}`).join(' ')} END`;
  const counted = fieldTerms.filter((_, i) => spec.fields[i]!.counted !== false);
  // Every field counted: the lengths are the sums of the terms' tf, without reading the fields again.
  const lengths = counted.length === fieldTerms.length
    ? `SELECT doc, sum(tf) AS len FROM ${TERMS} GROUP BY doc`
    : `SELECT doc, sum(${weight}) AS len FROM (${counted.join(' UNION ALL ')}) WHERE term <> '' GROUP BY doc`;
  const primary = spec.fields.flatMap((f, i) => (f.primary ? [i] : []));
  const ids = spec.fields.flatMap((f, i) => (f.id ? [i] : []));
  const titleTerms = (column: string) => `list_filter(${searchTermsSql(quoteIdent(column))}, lambda x: x <> '')`;
  return [
    `CREATE TEMP TABLE ${STAGE} AS SELECT row_number() OVER (ORDER BY ${spec.order})::INTEGER AS doc, * FROM (${spec.documents})`,
    `CREATE TABLE ${t('docs')} AS ${docsSelect(spec)}`,
    // A page's documents are then read through the key's index, not by a scan of every document.
    `ALTER TABLE ${t('docs')} ADD PRIMARY KEY (doc)`,
    `CREATE TEMP TABLE ${TERMS} AS
       SELECT term, doc, sum(${weight})::DOUBLE AS tf, bool_or(field IN (${primary.join(', ') || '-1'})) AS in_primary,
              bool_or(field NOT IN (${ids.join(', ') || '-1'})) AS in_text
       FROM (${fieldTerms.join(' UNION ALL ')}) WHERE term <> '' GROUP BY term, doc`,
    `CREATE TABLE ${t('stats')} AS SELECT (SELECT count(*) FROM ${STAGE})::BIGINT AS documents`,
    `CREATE TABLE ${t('postings')} AS
       WITH lengths AS (${lengths}),
            average AS (SELECT coalesce(sum(len) / nullif((SELECT documents FROM ${t('stats')}), 0), 1) AS avg_len FROM lengths)
       SELECT p.term, p.doc, p.tf, p.in_primary,
              (${BM25.k1} * (1 - ${BM25.b} + ${BM25.b} * coalesce(l.len, 0) / greatest(a.avg_len, 1e-9)))::DOUBLE AS norm
       FROM ${TERMS} p LEFT JOIN lengths l USING (doc) CROSS JOIN average a
       ORDER BY p.term, p.doc`,
    `CREATE TABLE ${t('titles')} AS
       SELECT DISTINCT title, doc FROM (
         ${[
           ...spec.titles.map((c) => `SELECT array_to_string(${titleTerms(c)}, ' ') AS title, doc FROM ${STAGE}`),
           ...(spec.titleLists ?? []).map((c) => `SELECT array_to_string(${titleTerms('item')}, ' ') AS title, doc FROM (SELECT doc, unnest(${quoteIdent(c)}) AS item FROM ${STAGE})`),
         ].join(' UNION ALL ')})
       WHERE title <> '' ORDER BY title, doc`,
    `CREATE TABLE ${t('idterms')} AS SELECT term FROM ${TERMS} GROUP BY term HAVING NOT bool_or(in_text) ORDER BY term`,
    `DROP TABLE ${TERMS}`,
    `DROP TABLE ${STAGE}`,
  ];
}

/**
 * Builds one source's index once its tables are loaded. Its temporary tables are the connection's
 * own, so sources may be indexed at once on separate connections (the export overlaps them with loads).
 */
export async function buildSearchIndex(connection: DuckDBConnection, spec: SearchSpec): Promise<void> {
  for (const sql of searchIndexSql(spec)) await connection.run(sql);
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

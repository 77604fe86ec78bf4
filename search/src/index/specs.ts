/**
 * Every stored source's search index as a `SearchSpec` (`spec.ts`): its documents, fields with
 * their BM25 weights, tie order, page columns and titles. `tables.ts` builds the index tables from them.
 */
import type { SearchSpec } from './spec.ts';

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
    // USDA descriptions name the food first, then its qualifiers ("Milk, reduced fat, fluid, 2% milkfat"):
    // the head before the first comma is the primary field, so a query naming a food ranks that food
    // above foods merely prepared with it. The two parts weigh what the description did, so BM25 is unchanged.
    documents: `SELECT fdc_id, description, split_part(description, ',', 1) AS head,
        CASE WHEN strpos(description, ',') > 0 THEN substr(description, strpos(description, ',') + 1) ELSE '' END AS qualifiers, category
      FROM food`,
    order: 'length(description), fdc_id',
    keys: ['fdc_id'],
    pageColumns: `SELECT fdc_id,
        max(amount) FILTER (WHERE nutrient_id = 1008) AS energy_kcal,
        max(amount) FILTER (WHERE nutrient_id = 1003) AS protein_g,
        max(amount) FILTER (WHERE nutrient_id = 1004) AS fat_g,
        max(amount) FILTER (WHERE nutrient_id = 1005) AS carbohydrate_g
      FROM food_nutrients WHERE nutrient_id IN (1003, 1004, 1005, 1008) GROUP BY fdc_id`,
    fields: [
      { column: 'head', weight: 2, primary: true },
      { column: 'qualifiers', weight: 2 },
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

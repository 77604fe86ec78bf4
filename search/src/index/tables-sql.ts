/**
 * The SQL that builds one source's search index (`tables.ts` runs it), in bounded memory:
 * the terms are aggregated one slice of documents at a time, each slice appending its rows sorted
 * by term to a scratch table (a run), and the output tables are then written from the runs one
 * range of terms at a time (`sorted-runs.ts`). No statement holds a whole source's vocabulary: an
 * aggregate keyed by (term, doc) is one slice's, a sort one range's.
 */
import { searchTermsSql } from '../vocabulary/terms.ts';
import { searchTable } from './table-names.ts';
import { quoteIdent } from '@uda/shared/duckdb';
import { BM25, type SearchSpec } from './spec.ts';

/** The temporary tables of a build, dropped at its end: each connection has its own. */
export const SCRATCH = {
  /** The documents, numbered (`doc`) in the tie order, stored by `doc`. */
  stage: '_search_stage',
  /** One slice's (term, doc) rows. */
  slice: '_search_slice',
  /** Every slice's (term, doc) rows with the document's length, each slice's run sorted by term. */
  terms: '_search_terms',
  /** Each document's BM25 length. */
  lengths: '_search_lengths',
  /** The collection's average length, one row. */
  average: '_search_average',
  /** Every slice's titles, each slice's run sorted by title. */
  titles: '_search_title_runs',
} as const;

const scratch = (name: keyof typeof SCRATCH) => quoteIdent(SCRATCH[name]);
const output = (spec: SearchSpec, kind: Parameters<typeof searchTable>[1]) => quoteIdent(searchTable(spec.source, kind));

/** The documents numbered in the tie order, stored in that order so that a slice reads only its row groups. */
export function stageSql(spec: SearchSpec): string {
  return `CREATE TEMP TABLE ${scratch('stage')} AS
    SELECT row_number() OVER (ORDER BY ${spec.order})::INTEGER AS doc, * FROM (${spec.documents}) ORDER BY doc`;
}

/** `docs`, keyed by `doc` (a page's documents are read through the key's index), and `stats`. */
export function docsSql(spec: SearchSpec): string[] {
  const keys = spec.keys.map(quoteIdent);
  const select = spec.pageColumns
    ? `SELECT s.doc, ${keys.map((k) => `s.${k}`).join(', ')}, page.* EXCLUDE (${keys.join(', ')})
       FROM ${scratch('stage')} s LEFT JOIN (${spec.pageColumns}) page ON ${keys.map((k) => `page.${k} = s.${k}`).join(' AND ')}
       ORDER BY s.doc`
    : `SELECT doc, ${keys.join(', ')} FROM ${scratch('stage')} ORDER BY doc`;
  return [
    `CREATE TABLE ${output(spec, 'docs')} AS ${select}`,
    `ALTER TABLE ${output(spec, 'docs')} ADD PRIMARY KEY (doc)`,
    `CREATE TABLE ${output(spec, 'stats')} AS SELECT (SELECT count(*) FROM ${scratch('stage')})::BIGINT AS documents`,
  ];
}

/** The documents `first`…`last` of the stage. */
const sliceOf = (first: number, last: number) => `(SELECT * FROM ${scratch('stage')} WHERE doc BETWEEN ${first} AND ${last})`;

/** A document's terms per field: `doc`, `field` (its index in `spec.fields`), `term` ('' included). */
function fieldTerms(spec: SearchSpec, documents: string, counted = false): string {
  return spec.fields
    .flatMap((f, i) => (counted && f.counted === false ? [] : [`SELECT doc, ${i} AS field, unnest(${searchTermsSql(quoteIdent(f.column))}) AS term FROM ${documents}`]))
    .join(' UNION ALL ');
}

const weight = (spec: SearchSpec) => `CASE field ${spec.fields.map((f, i) => `WHEN ${i} THEN ${f.weight}`).join(' ')} END`;
const fieldsWhere = (spec: SearchSpec, flag: 'primary' | 'id') => spec.fields.flatMap((f, i) => (f[flag] ? [i] : [])).join(', ') || '-1';

/** The (term, doc) aggregate of some documents: `tf` the field-weighted frequency; `in_text` false when only id fields hold the term. */
function termsSelect(spec: SearchSpec, documents: string): string {
  return `SELECT term, doc, sum(${weight(spec)})::DOUBLE AS tf, bool_or(field IN (${fieldsWhere(spec, 'primary')})) AS in_primary,
      bool_or(field NOT IN (${fieldsWhere(spec, 'id')})) AS in_text
    FROM (${fieldTerms(spec, documents)}) WHERE term <> '' GROUP BY term, doc`;
}

/** Each document's length: every field counted, the sum of its terms' tf, without reading the fields again. */
function lengthsSelect(spec: SearchSpec, documents: string, terms: string): string {
  if (spec.fields.every((f) => f.counted !== false)) return `SELECT doc, sum(tf) AS len FROM ${terms} GROUP BY doc`;
  return `SELECT doc, sum(${weight(spec)}) AS len FROM (${fieldTerms(spec, documents, true)}) WHERE term <> '' GROUP BY doc`;
}

/** The exact and prefix texts of some documents: the primary texts, and each item of a title list, as space-joined terms. */
function titlesSelect(spec: SearchSpec, documents: string): string {
  const titleTerms = (column: string) => `array_to_string(list_filter(${searchTermsSql(quoteIdent(column))}, lambda x: x <> ''), ' ')`;
  const texts = [
    ...spec.titles.map((c) => `SELECT ${titleTerms(c)} AS title, doc FROM ${documents}`),
    ...(spec.titleLists ?? []).map((c) => `SELECT ${titleTerms('item')} AS title, doc FROM (SELECT doc, unnest(${quoteIdent(c)}) AS item FROM ${documents})`),
  ];
  return `SELECT DISTINCT title, doc FROM (${texts.join(' UNION ALL ')}) WHERE title <> ''`;
}

/** The scratch tables the slices append to, empty, with the types the slices' SELECTs give. */
export function scratchTablesSql(spec: SearchSpec): string[] {
  const none = sliceOf(1, 0);
  return [
    `CREATE TEMP TABLE ${scratch('slice')} AS ${termsSelect(spec, none)} WITH NO DATA`,
    `CREATE TEMP TABLE ${scratch('lengths')} AS ${lengthsSelect(spec, none, scratch('slice'))} WITH NO DATA`,
    `CREATE TEMP TABLE ${scratch('terms')} AS SELECT t.*, l.len FROM ${scratch('slice')} t, ${scratch('lengths')} l WITH NO DATA`,
    `CREATE TEMP TABLE ${scratch('titles')} AS ${titlesSelect(spec, none)} WITH NO DATA`,
  ];
}

/** One slice of documents (`first`…`last`): its terms, lengths and titles appended to the scratch tables, each run sorted. */
export function sliceSql(spec: SearchSpec, first: number, last: number): string[] {
  const documents = sliceOf(first, last);
  return [
    `DELETE FROM ${scratch('slice')}`,
    `INSERT INTO ${scratch('slice')} ${termsSelect(spec, documents)}`,
    `INSERT INTO ${scratch('lengths')} ${lengthsSelect(spec, documents, scratch('slice'))}`,
    `INSERT INTO ${scratch('terms')}
       SELECT t.*, l.len FROM ${scratch('slice')} t
       LEFT JOIN (SELECT * FROM ${scratch('lengths')} WHERE doc BETWEEN ${first} AND ${last}) l USING (doc)
       ORDER BY t.term, t.doc`,
    `INSERT INTO ${scratch('titles')} ${titlesSelect(spec, documents)} ORDER BY title, doc`,
  ];
}

/** The average length (a document without counted terms has length 0), and the output tables the ranges fill, empty. */
export function outputTablesSql(spec: SearchSpec): string[] {
  return [
    `CREATE TEMP TABLE ${scratch('average')} AS
       SELECT coalesce(sum(len) / nullif((SELECT documents FROM ${output(spec, 'stats')}), 0), 1) AS avg_len FROM ${scratch('lengths')}`,
    `CREATE TABLE ${output(spec, 'postings')} AS ${postingsSelect('false')} WITH NO DATA`,
    `CREATE TABLE ${output(spec, 'idterms')} AS ${idtermsSelect('false')} WITH NO DATA`,
    `CREATE TABLE ${output(spec, 'titles')} AS SELECT title, doc FROM ${scratch('titles')} WITH NO DATA`,
  ];
}

/**
 * The postings of the terms `where` selects, sorted: `norm` is the document's BM25 length
 * normalisation, stored per posting so that ranking never reads the document table.
 */
function postingsSelect(where: string): string {
  return `SELECT t.term, t.doc, t.tf, t.in_primary,
      (${BM25.k1} * (1 - ${BM25.b} + ${BM25.b} * coalesce(t.len, 0) / greatest(a.avg_len, 1e-9)))::DOUBLE AS norm
    FROM ${scratch('terms')} t CROSS JOIN ${scratch('average')} a WHERE ${where} ORDER BY t.term, t.doc`;
}

/** The terms `where` selects that only id fields hold, sorted. */
function idtermsSelect(where: string): string {
  return `SELECT term FROM ${scratch('terms')} WHERE ${where} GROUP BY term HAVING NOT bool_or(in_text) ORDER BY term`;
}

/** The inserts of one range of terms, in output order (`insertByRanges`). */
export function termRangeInserts(spec: SearchSpec): ((where: string) => string)[] {
  return [
    (where) => `INSERT INTO ${output(spec, 'postings')} ${postingsSelect(where)}`,
    (where) => `INSERT INTO ${output(spec, 'idterms')} ${idtermsSelect(where)}`,
  ];
}

/** The insert of one range of titles. */
export function titleRangeInsert(spec: SearchSpec): (where: string) => string {
  return (where) => `INSERT INTO ${output(spec, 'titles')} SELECT title, doc FROM ${scratch('titles')} WHERE ${where} ORDER BY title, doc`;
}

export function dropScratchSql(): string[] {
  return Object.values(SCRATCH).map((table) => `DROP TABLE IF EXISTS ${quoteIdent(table)}`);
}

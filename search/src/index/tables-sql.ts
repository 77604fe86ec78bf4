/**
 * The SQL of one source's search index (`tables.ts` runs it): the numbered documents, `docs` and
 * `stats`, the one scan of the documents' terms and titles that the postings and titles are built
 * from in TypeScript (`posting-pass.ts`), and the empty output tables the merge appends to.
 */
import { searchTermsSql } from '../vocabulary/terms.ts';
import { searchTable } from './table-names.ts';
import { quoteIdent } from '@uda/shared/duckdb';
import type { SearchSpec } from './spec.ts';

/** The temporary tables of a build, dropped at its end: each connection has its own. */
export const SCRATCH = {
  /** The documents, numbered (`doc`) in the tie order, stored by `doc`. */
  stage: '_search_stage',
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

/** In `documentTextsSql`'s text: between terms, between fields (or titles), and between the fields and the titles. A term holds none. */
export const SEPARATORS = { term: ' ', field: '\t', titles: '\n' } as const;

const terms = (expression: string) => `array_to_string(${searchTermsSql(expression)}, ' ')`;
const titleTerms = (expression: string) => `array_to_string(list_filter(${searchTermsSql(expression)}, lambda x: x <> ''), ' ')`;

/**
 * Every document's terms and titles, in `doc` order (the stage's stored order, which a plain scan
 * keeps): `doc` and one text (reading a string is a native call, so one per document). The text is
 * each field of `spec` in order as its terms joined by spaces (empty terms included), the fields
 * joined by tabs; a newline; then the titles (each title column, then each item of each title list,
 * as space-joined terms; empty ones included) joined by tabs.
 */
export function documentTextsSql(spec: SearchSpec): string {
  const fields = spec.fields.map((f) => terms(quoteIdent(f.column)));
  const titles = [
    ...spec.titles.map((c) => titleTerms(quoteIdent(c))),
    ...(spec.titleLists ?? []).map((c) => `coalesce(array_to_string(list_transform(${quoteIdent(c)}, lambda item: ${titleTerms('item')}), chr(9)), '')`),
  ];
  return `SELECT doc, concat_ws(chr(9), ${fields.join(', ')}) || chr(10) || concat_ws(chr(9), ${titles.join(', ')}) AS texts FROM ${scratch('stage')}`;
}

/**
 * The output tables, empty, appended to by the merge of the runs (`posting-merge.ts`) in term (and
 * title) order: `doc` is the stage's INTEGER, `tf` and `norm` DOUBLE, as BM25 reads them.
 */
export function outputTablesSql(spec: SearchSpec): string[] {
  return [
    `CREATE TABLE ${output(spec, 'postings')} (term VARCHAR, doc INTEGER, tf DOUBLE, in_primary BOOLEAN, norm DOUBLE)`,
    `CREATE TABLE ${output(spec, 'idterms')} (term VARCHAR)`,
    `CREATE TABLE ${output(spec, 'titles')} (title VARCHAR, doc INTEGER)`,
  ];
}

export function dropScratchSql(): string[] {
  return Object.values(SCRATCH).map((table) => `DROP TABLE IF EXISTS ${quoteIdent(table)}`);
}

/**
 * The stored sources' search index as typed arrays, built from the `_search_*` tables the exporter
 * writes into `service.db` (`tables.ts`). The exporter builds them once per
 * version and writes them to `search-index.bin` (`index-file.ts`) for the runners; a runner given an
 * older export without that file builds them itself, through this same code.
 *
 * Layout per source, as typed arrays:
 * - `terms`: the term dictionary, sorted as the postings table is, so term t's postings are
 *   `[postingEnds[t − 1], postingEnds[t])` and a prefix's terms are one range;
 * - per posting: `doc` (Int32), `tf` (Float32: the field-weighted frequency), `primary` (a whole
 *   word of a primary field); per document: `norms[doc]`, the BM25 length normalisation;
 * - `idTerms`: per term, whether only id fields hold it (the exporter's `idterms` table);
 * - `stems`: the dictionary's distinct Porter2 stems, sorted, each with its terms (`stemTerms`
 *   from `stemEnds[s − 1]` to `stemEnds[s]`), so a query word's stem finds every form of it;
 * - `titles`: the primary texts as space-joined stems of their terms, sorted, with their
 *   documents, for the exact and prefix tiers ("Strawberries, raw" is `strawberri raw`).
 * About 10 bytes per posting plus the titles' and stems' bytes: `indexBytes` reports it per source.
 * Every array is on a SharedArrayBuffer, so the runner's ranking threads read the one copy.
 */
import type { DuckDBConnection, DuckDBDataChunk, DuckDBResult } from '@duckdb/node-api';
import { searchTable } from './table-names.ts';
import type { StoredLookupSource } from './page-sql.ts';
import { equalRange, SortedTextsBuilder, textAt, textCount, type SortedTexts } from './sorted-texts.ts';
import { compareUtf8, stemOf, stemPhrase } from '../vocabulary/stems.ts';
import type { SourceIndex } from './index-arrays.ts';
import { type IndexArrays, withPostingExtras } from './posting-extras.ts';
import type { PostingArrays, TitlePairs } from './posting-merge.ts';

export type { SourceIndex } from './index-arrays.ts';

/** Bytes held by one source's index. */
export function indexBytes(index: SourceIndex): number {
  const arrays = [index.postingEnds, index.postingDocs, index.postingTf, index.postingPrimary, index.norms, index.titleDocs,
    index.terms.ends, index.terms.bytes, index.idTerms, index.titles.ends, index.titles.bytes, index.stems.ends, index.stems.bytes, index.stemEnds, index.stemTerms, index.blockImpact, index.blockPrimary, index.postingNorms, index.normTable];
  return arrays.reduce((sum, array) => sum + array.byteLength, 0);
}

/** Where term `t`'s postings start in the posting arrays. */
export const postingStart = (index: SourceIndex, t: number): number => (t === 0 ? 0 : index.postingEnds[t - 1]!);

/** Term `t`'s document frequency: the length of its posting list. */
export const postingCount = (index: SourceIndex, t: number): number => index.postingEnds[t]! - postingStart(index, t);

/** Reads every chunk of `result`, in order, with its row count (a native call per read of `rowCount`). */
async function eachChunk(result: DuckDBResult, visit: (chunk: DuckDBDataChunk, rows: number) => void): Promise<void> {
  for (let chunk = await result.fetchChunk(); chunk; chunk = await result.fetchChunk()) {
    const rows = chunk.rowCount;
    if (rows === 0) return;
    visit(chunk, rows);
  }
}

async function singleNumber(connection: DuckDBConnection, sql: string): Promise<number> {
  const reader = await connection.runAndReadAll(sql);
  return Number(reader.getRows()[0]?.[0] ?? 0);
}

async function tableExists(connection: DuckDBConnection, table: string): Promise<boolean> {
  const reader = await connection.runAndReadAll('SELECT count(*) FROM duckdb_tables() WHERE table_name = $1', [table]);
  return Number(reader.getRows()[0]?.[0]) > 0;
}

/** The dictionary and where each term's postings end, from one sorted aggregate. */
async function loadTerms(connection: DuckDBConnection, postings: string): Promise<{ terms: SortedTexts; postingEnds: Uint32Array }> {
  const count = await singleNumber(connection, `SELECT count(DISTINCT term) FROM ${postings}`);
  const builder = new SortedTextsBuilder(count, count * 10);
  const postingEnds = new Uint32Array(count);
  let t = 0;
  let end = 0;
  await eachChunk(await connection.stream(`SELECT term, count(*)::INTEGER FROM ${postings} GROUP BY term ORDER BY term`), (chunk, rows) => {
    const terms = chunk.getColumnVector(0);
    const counts = chunk.getColumnVector(1);
    for (let row = 0; row < rows; row++) {
      builder.append(terms.getItem(row) as string);
      end += counts.getItem(row) as number;
      postingEnds[t++] = end;
    }
  });
  return { terms: builder.finish(), postingEnds };
}

/**
 * The postings in the table's own order (`ORDER BY term, doc` when it was written; a plain scan
 * keeps insertion order), which is the dictionary's order. Reading them without an ORDER BY avoids
 * sorting tens of millions of rows; the check that each term's documents strictly increase catches
 * a scan that did not keep the order.
 */
async function loadPostings(connection: DuckDBConnection, postings: string, postingEnds: Uint32Array, documents: number) {
  const total = postingEnds.at(-1) ?? 0;
  const postingDocs = new Int32Array(new SharedArrayBuffer(total * 4));
  const postingTf = new Float32Array(new SharedArrayBuffer(total * 4));
  const postingPrimary = new Uint8Array(new SharedArrayBuffer(total));
  const norms = new Float64Array(new SharedArrayBuffer((documents + 1) * 8));
  let p = 0;
  let t = 0;
  await eachChunk(await connection.stream(`SELECT doc, tf, in_primary, norm FROM ${postings}`), (chunk, rows) => {
    const [docs, tfs, primaries, docNorms] = [0, 1, 2, 3].map((column) => chunk.getColumnVector(column));
    for (let row = 0; row < rows; row++, p++) {
      while (postingEnds[t]! <= p) t++;
      const doc = docs!.getItem(row) as number;
      const tf = tfs!.getItem(row) as number;
      const termStart = t === 0 ? 0 : postingEnds[t - 1]!;
      if (doc < 1 || doc > documents || (p > termStart && postingDocs[p - 1]! >= doc)) throw new Error(`${postings}: posting ${p} (doc ${doc}) is out of order`);
      // Float32 halves the memory; the exporter's weights (multiples of 0.5) keep every tf exact in it.
      if (Math.fround(tf) !== tf) throw new Error(`${postings}: tf ${tf} is not exact as a float32`);
      postingDocs[p] = doc;
      postingTf[p] = tf;
      postingPrimary[p] = primaries!.getItem(row) ? 1 : 0;
      norms[doc] = docNorms!.getItem(row) as number;
    }
  });
  if (p !== total) throw new Error(`${postings}: ${p} postings read, ${total} counted`);
  return { postingDocs, postingTf, postingPrimary, norms };
}

/** The dictionary's terms grouped by stem: the distinct stems in order, and each one's terms. */
function buildStems(terms: SortedTexts): { stems: SortedTexts; stemEnds: Uint32Array; stemTerms: Int32Array } {
  const count = textCount(terms);
  const stemOfTerm = Array.from({ length: count }, (_, t) => stemOf(textAt(terms, t)));
  const order = Array.from({ length: count }, (_, t) => t).sort((a, b) => compareUtf8(stemOfTerm[a]!, stemOfTerm[b]!) || a - b);
  const distinct = order.filter((t, i) => i === 0 || stemOfTerm[t] !== stemOfTerm[order[i - 1]!]).length;
  const builder = new SortedTextsBuilder(distinct, count * 8);
  const stemEnds = new Uint32Array(distinct);
  let s = -1;
  order.forEach((t, i) => {
    if (i === 0 || stemOfTerm[t] !== stemOfTerm[order[i - 1]!]) {
      builder.append(stemOfTerm[t]!);
      s++;
    }
    stemEnds[s] = i + 1;
  });
  return { stems: builder.finish(), stemEnds, stemTerms: Int32Array.from(order) };
}

/** The titles as stems, re-sorted: the pairs are the `titles` table's, in (title, doc) order. */
function stemTitles(pairs: TitlePairs): { titles: SortedTexts; titleDocs: Int32Array } {
  const count = textCount(pairs.texts);
  const cache = new Map<string, string>();
  const texts = Array.from({ length: count }, (_, i) => stemPhrase(textAt(pairs.texts, i), cache));
  const order = Array.from({ length: count }, (_, i) => i).sort((a, b) => compareUtf8(texts[a]!, texts[b]!) || pairs.docs[a]! - pairs.docs[b]!);
  const builder = new SortedTextsBuilder(count, pairs.texts.bytes.length);
  const titleDocs = new Int32Array(count);
  order.forEach((i, at) => {
    builder.append(texts[i]!);
    titleDocs[at] = pairs.docs[i]!;
  });
  return { titles: builder.finish(), titleDocs };
}

/** The `titles` table's pairs, in its stored order. */
async function loadTitlePairs(connection: DuckDBConnection, table: string): Promise<TitlePairs> {
  const count = await singleNumber(connection, `SELECT count(*) FROM ${table}`);
  const texts = new SortedTextsBuilder(count, count * 16);
  const docs = new Int32Array(count);
  let i = 0;
  await eachChunk(await connection.stream(`SELECT title, doc FROM ${table}`), (chunk, rows) => {
    const [titleColumn, docColumn] = [chunk.getColumnVector(0), chunk.getColumnVector(1)];
    for (let row = 0; row < rows; row++, i++) {
      texts.append(titleColumn.getItem(row) as string);
      docs[i] = docColumn.getItem(row) as number;
    }
  });
  return { texts: texts.finish(), docs };
}

/** Marks the terms of the `idterms` table (an older export without it marks none). */
async function loadIdTerms(connection: DuckDBConnection, source: StoredLookupSource, terms: SortedTexts): Promise<Uint8Array> {
  const idTerms = new Uint8Array(textCount(terms));
  if (!(await tableExists(connection, searchTable(source, 'idterms')))) return idTerms;
  await eachChunk(await connection.stream(`SELECT term FROM ${searchTable(source, 'idterms')}`), (chunk, rows) => {
    const column = chunk.getColumnVector(0);
    for (let row = 0; row < rows; row++) {
      const [first, end] = equalRange(terms, Buffer.from(column.getItem(row) as string, 'utf8'));
      if (first < end) idTerms[first] = 1;
    }
  });
  return idTerms;
}

/** The postings' arrays from the `postings`, `stats` and `idterms` tables; undefined when the source has no index. */
async function loadPostingArrays(connection: DuckDBConnection, source: StoredLookupSource): Promise<PostingArrays | undefined> {
  if (!(await tableExists(connection, searchTable(source, 'postings')))) return undefined;
  const documents = await singleNumber(connection, `SELECT documents FROM ${searchTable(source, 'stats')}`);
  const { terms, postingEnds } = await loadTerms(connection, searchTable(source, 'postings'));
  const postings = await loadPostings(connection, searchTable(source, 'postings'), postingEnds, documents);
  const idTerms = await loadIdTerms(connection, source, terms);
  return { documents, terms, postingEnds, ...postings, idTerms };
}

/** A source's arrays from what its index build gave (or what was read back from its tables): the postings', the stems and the stemmed titles. */
export function completeIndexArrays<P extends { readonly terms: SortedTexts }>({ postings, titles }: { postings: P; titles: TitlePairs }): P & Pick<IndexArrays, 'stems' | 'stemEnds' | 'stemTerms' | 'titles' | 'titleDocs'> {
  const { stems, stemEnds, stemTerms } = buildStems(postings.terms);
  return { ...postings, stems, stemEnds, stemTerms, ...stemTitles(titles) };
}

/** A source's index read from its tables, every array on a SharedArrayBuffer; undefined when the source has no index. */
export async function loadSourceIndex(connection: DuckDBConnection, source: StoredLookupSource): Promise<SourceIndex | undefined> {
  const postings = await loadPostingArrays(connection, source);
  if (!postings) return undefined;
  const arrays = completeIndexArrays({ postings, titles: await loadTitlePairs(connection, searchTable(source, 'titles')) });
  return withPostingExtras({
    ...arrays, terms: sharedTexts(arrays.terms), postingEnds: shared(arrays.postingEnds), idTerms: shared(arrays.idTerms),
    stems: sharedTexts(arrays.stems), stemEnds: shared(arrays.stemEnds), stemTerms: shared(arrays.stemTerms),
    titles: sharedTexts(arrays.titles), titleDocs: shared(arrays.titleDocs),
  });
}

type IndexArray = Int32Array | Uint32Array | Uint8Array;

/**
 * `array` copied onto a SharedArrayBuffer. The smaller arrays are built as usual and copied once
 * (a transient copy of a few MB); the postings, most of the index, are allocated shared.
 */
function shared<T extends IndexArray>(array: T): T {
  const copy = new (array.constructor as new (buffer: SharedArrayBuffer) => T)(new SharedArrayBuffer(array.byteLength));
  copy.set(array);
  return copy;
}

function sharedTexts(texts: SortedTexts): SortedTexts {
  const bytes = Buffer.from(new SharedArrayBuffer(texts.bytes.length));
  texts.bytes.copy(bytes);
  return { bytes, ends: shared(texts.ends) };
}

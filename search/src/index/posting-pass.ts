/**
 * The one scan of a source's documents that gathers its postings and titles: DuckDB splits each
 * field and title into terms (the index's own SQL tokenizer, `searchTermsSql`), streamed in `doc`
 * order as one text per document (`documentTextsSql`); here each term's field-weighted frequency
 * and flags are summed per document into the slice's postings (`posting-runs.ts`), and its distinct
 * titles kept as the slice's title "postings"; each slice is written as two runs, and each
 * document's BM25 length kept for its norm. No aggregate, join or sort runs in DuckDB.
 */
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { IN_TEXT, PRIMARY, SlicePostings } from './posting-runs.ts';
import { BM25, type SearchSpec } from './spec.ts';
import { SEPARATORS } from './tables-sql.ts';

export interface PostingRuns {
  /** The postings' run files, in `doc` order. */
  readonly paths: string[];
  /** The titles' run files, in `doc` order. */
  readonly titlePaths: string[];
  /** Postings written to the runs, all together. */
  readonly postings: number;
  /** Per document (1 to `documents`) its BM25 length normalisation; 0 for a document without postings. */
  readonly norms: Float64Array;
}

/** When a slice is written as a run: after this many documents or postings, whichever comes first. */
export interface RunLimits {
  readonly documents: number;
  readonly postings: number;
}

/** What each field adds to a posting: its weight, its flags, and whether it lengthens the document. */
function fieldParts(spec: SearchSpec) {
  return spec.fields.map((f) => ({ weight: f.weight, flags: (f.primary ? PRIMARY : 0) | (f.id ? 0 : IN_TEXT), counted: f.counted !== false }));
}

/**
 * Each document's norm, `k1 · (1 − b + b · len / avg_len)`, evaluated as the SQL build did (the
 * postings table holds it, so its every bit counts). The average is the sum of the lengths over every
 * document, or 1 when no document has a counted term. The lengths are sums of weights that are
 * multiples of 0.5, so every sum is exact, in any order.
 */
function norms(lengths: Float64Array, withPostings: Uint8Array, documents: number): Float64Array {
  let sum = 0;
  for (let doc = 1; doc <= documents; doc++) sum += lengths[doc]!;
  const average = sum > 0 ? sum / documents : 1;
  const result = new Float64Array(documents + 1);
  for (let doc = 1; doc <= documents; doc++) {
    if (withPostings[doc]) result[doc] = BM25.k1 * (1 - BM25.b + (BM25.b * lengths[doc]!) / Math.max(average, 1e-9));
  }
  return result;
}

/** A slice's postings and titles, written as runs together. */
class Slice {
  readonly postings = new SlicePostings();
  readonly titles = new SlicePostings();
  documents = 0;
}

/** Adds one document's text (`documentTextsSql`) to the slice; returns whether it has any term, and adds its counted length to `lengths`. */
function addDocument(slice: Slice, fields: ReturnType<typeof fieldParts>, doc: number, text: string, lengths: Float64Array): boolean {
  const [fieldsText, titlesText] = text.split(SEPARATORS.titles) as [string, string | undefined];
  const fieldTexts = fieldsText.split(SEPARATORS.field);
  if (fieldTexts.length !== fields.length || titlesText === undefined) throw new Error(`document ${doc} has ${fieldTexts.length} fields`);
  let any = false;
  fields.forEach((field, i) => {
    for (const term of fieldTexts[i]!.split(SEPARATORS.term)) {
      if (term === '') continue;
      slice.postings.add(term, doc, field.weight, field.flags);
      any = true;
      if (field.counted) lengths[doc]! += field.weight;
    }
  });
  for (const title of titlesText.split(SEPARATORS.field)) if (title !== '') slice.titles.add(title, doc, 0, 0);
  return any;
}

/** Streams `texts` (`documentTextsSql`: `doc` and its text, in `doc` order) into run files in `dir`. */
export async function writePostingRuns(
  connection: DuckDBConnection, spec: SearchSpec, texts: string, documents: number, limits: RunLimits, dir: string,
): Promise<PostingRuns> {
  const fields = fieldParts(spec);
  const lengths = new Float64Array(documents + 1);
  const withPostings = new Uint8Array(documents + 1);
  const [paths, titlePaths]: [string[], string[]] = [[], []];
  let slice = new Slice();
  let postings = 0;
  let previous = 0;
  const flush = async () => {
    const path = (kind: string) => join(dir, `${kind}-${paths.length}.bin`);
    if (slice.documents === 0) return;
    paths.push(path('postings'));
    titlePaths.push(path('titles'));
    await slice.postings.writeRun(paths.at(-1)!);
    await slice.titles.writeRun(titlePaths.at(-1)!);
    postings += slice.postings.postings;
    slice = new Slice();
  };
  const result = await connection.stream(texts);
  for (let chunk = await result.fetchChunk(); chunk; chunk = await result.fetchChunk()) {
    const rows = chunk.rowCount;
    if (rows === 0) break;
    // The chunk's values are read before any await: a chunk's strings were seen to change across one.
    const [docColumn, textColumn] = [chunk.getColumnVector(0), chunk.getColumnVector(1)];
    const docs = Array.from({ length: rows }, (_, row) => docColumn.getItem(row) as number);
    const docTexts = Array.from({ length: rows }, (_, row) => textColumn.getItem(row) as string);
    for (let row = 0; row < rows; row++) {
      const doc = docs[row]!;
      if (doc <= previous || doc > documents) throw new Error(`${spec.source}: document ${doc} is out of order`);
      previous = doc;
      if (addDocument(slice, fields, doc, docTexts[row]!, lengths)) withPostings[doc] = 1;
      if (++slice.documents >= limits.documents || slice.postings.postings >= limits.postings) await flush();
    }
  }
  await flush();
  return { paths, titlePaths, postings, norms: norms(lengths, withPostings, documents) };
}

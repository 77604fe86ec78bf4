/**
 * The runs of a source's postings and titles (`posting-runs.ts`) merged, term by term in UTF-8 byte
 * order, into both forms of the index at once: the `postings`, `idterms` and `titles` tables
 * (through DuckDB's appender, in the order they are read back) and the runner's arrays
 * (`IndexArrays`' postings part, and the titles before stemming). The runs are slices of documents
 * in `doc` order, so a term's postings are its runs' lists one after the other, already in `doc`
 * order: no sort of the postings happens anywhere.
 */
import { BOOLEAN, DOUBLE, DuckDBDataChunk, INTEGER, VARCHAR, type DuckDBAppender, type DuckDBConnection, type DuckDBType, type DuckDBVector } from '@duckdb/node-api';
import { closeSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { IN_TEXT, PRIMARY, RunReader } from './posting-runs.ts';
import type { SourceIndex } from './index-arrays.ts';
import type { SortedTexts } from './sorted-texts.ts';

/** The postings part of a source's index arrays, as `source-index.ts` reads them from the tables. */
export type PostingArrays = Pick<SourceIndex, 'documents' | 'terms' | 'postingEnds' | 'postingDocs' | 'postingTf' | 'postingPrimary' | 'norms' | 'idTerms'>;

/** DuckDB's vector size: an appended chunk holds at most this many rows. */
const CHUNK_ROWS = 2048;

/**
 * Rows appended to a table a chunk at a time: the caller sets row `row`'s values in `vectors`, then
 * calls `next`. A number costs no native call, a string one.
 */
class ChunkAppender {
  readonly vectors: DuckDBVector[];
  row = 0;
  private readonly appender: DuckDBAppender;
  private readonly chunk: DuckDBDataChunk;

  private constructor(appender: DuckDBAppender, chunk: DuckDBDataChunk) {
    this.appender = appender;
    this.chunk = chunk;
    this.vectors = Array.from({ length: chunk.columnCount }, (_, column) => chunk.getColumnVector(column));
  }

  static async open(connection: DuckDBConnection, table: string, types: readonly DuckDBType[]): Promise<ChunkAppender> {
    return new ChunkAppender(await connection.createAppender(table), DuckDBDataChunk.create(types, CHUNK_ROWS));
  }

  next(): void {
    if (++this.row === CHUNK_ROWS) this.append();
  }

  private append(): void {
    if (this.row === 0) return;
    for (const vector of this.vectors) vector.flush();
    // A partial chunk is cut to its rows (the vectors above stay valid for the rows set).
    if (this.row < CHUNK_ROWS) this.chunk.rowCount = this.row;
    this.appender.appendDataChunk(this.chunk);
    this.row = 0;
  }

  close(): void {
    this.append();
    this.appender.flushSync();
    this.appender.closeSync();
  }
}

/** A column of the postings written to a file of its own as the merge produces it, instead of held in memory. */
export interface ColumnFile {
  readonly path: string;
  readonly type: 'i32' | 'f32' | 'u8';
  readonly length: number;
}

type PostingColumn = 'postingDocs' | 'postingTf' | 'postingPrimary';

/** The postings' arrays as the merge gives them: the per-posting columns in files, the rest in memory. */
export type MergedPostings = Omit<PostingArrays, PostingColumn> & Record<PostingColumn, ColumnFile>;

/** Appends a column's values to its file through a typed array of them. */
class ColumnWriter {
  private readonly file: number;
  private used = 0;
  private written = 0;
  private readonly buffer: Int32Array | Float32Array | Uint8Array;
  private readonly path: string;
  private readonly type: ColumnFile['type'];

  constructor(path: string, type: ColumnFile['type']) {
    this.path = path;
    this.type = type;
    this.buffer = new { i32: Int32Array, f32: Float32Array, u8: Uint8Array }[type](1 << 16);
    this.file = openSync(path, 'w');
  }

  push(value: number): void {
    this.buffer[this.used++] = value;
    if (this.used === this.buffer.length) this.flush();
  }

  private flush(): void {
    writeSync(this.file, this.buffer, 0, this.used * this.buffer.BYTES_PER_ELEMENT);
    this.written += this.used;
    this.used = 0;
  }

  close(): ColumnFile {
    this.flush();
    closeSync(this.file);
    return { path: this.path, type: this.type, length: this.written };
  }
}

/** The titles as the `titles` table holds them, in (title, doc) order: the runner stems and re-sorts them. */
export interface TitlePairs {
  readonly texts: SortedTexts;
  readonly docs: Int32Array;
}

/** What the index build returns for the runner's arrays: `release` removes the column files once they are copied. */
export interface BuiltIndex {
  readonly postings: MergedPostings;
  readonly titles: TitlePairs;
  release(): Promise<void>;
}

/** A growing list of UTF-8 texts appended in order, finished as `SortedTexts`. */
class TextList {
  private bytes = Buffer.allocUnsafe(1 << 16);
  private ends = new Uint32Array(1 << 12);
  private used = 0;
  count = 0;

  append(text: Buffer): void {
    if (this.used + text.length > this.bytes.length) this.bytes = Buffer.concat([this.bytes.subarray(0, this.used)], Math.max(this.used + text.length, this.bytes.length * 2));
    if (this.count === this.ends.length) {
      const ends = new Uint32Array(this.ends.length * 2);
      ends.set(this.ends);
      this.ends = ends;
    }
    this.used += text.copy(this.bytes, this.used);
    this.ends[this.count++] = this.used;
  }

  finish(): SortedTexts {
    return { bytes: Buffer.from(this.bytes.subarray(0, this.used)), ends: this.ends.slice(0, this.count) };
  }
}

export interface MergeTarget {
  readonly connection: DuckDBConnection;
  /** Where the postings' columns are written (`ColumnFile`). */
  readonly columnsDir: string;
  readonly postingsTable: string;
  readonly idtermsTable: string;
  readonly documents: number;
  /** Per document its BM25 length normalisation (a document without postings keeps 0, as the tables give it). */
  readonly norms: Float64Array;
  readonly postings: number;
}

/** The runs' current terms: the smallest term's readers, in run order. */
function smallest(readers: readonly RunReader[]): RunReader[] {
  let least: RunReader[] = [];
  for (const reader of readers) {
    const order = least.length === 0 ? -1 : Buffer.compare(reader.term, least[0]!.term);
    if (order < 0) least = [reader];
    else if (order === 0) least.push(reader);
  }
  return least;
}

/**
 * Visits each term of the run files at `paths` (in `doc` order) once, in UTF-8 byte order, with the
 * runs that hold it in run order (their postings together are the term's, in `doc` order).
 */
async function eachMergedTerm(paths: readonly string[], visit: (term: Buffer, runs: readonly RunReader[]) => void): Promise<void> {
  const readers = await Promise.all(paths.map((path) => RunReader.open(path)));
  try {
    let active = (await Promise.all(readers.map(async (reader) => ((await reader.advance()) ? reader : undefined)))).filter((r) => r !== undefined);
    while (active.length > 0) {
      const least = smallest(active);
      visit(least[0]!.term, least);
      const finished = new Set<RunReader>();
      for (const run of least) if (!(await run.advance())) finished.add(run);
      if (finished.size > 0) active = active.filter((run) => !finished.has(run));
    }
  } finally {
    await Promise.all(readers.map((reader) => reader.close()));
  }
}

/** Merges the postings' run files at `paths` into the target's tables, returning the arrays (the per-posting ones in files). */
export async function mergePostings(paths: readonly string[], target: MergeTarget): Promise<MergedPostings> {
  const postings = await ChunkAppender.open(target.connection, target.postingsTable, [VARCHAR, INTEGER, DOUBLE, BOOLEAN, DOUBLE]);
  const idterms = await ChunkAppender.open(target.connection, target.idtermsTable, [VARCHAR]);
  const [termColumn, docColumn, tfColumn, primaryColumn, normColumn] = postings.vectors as [DuckDBVector, DuckDBVector, DuckDBVector, DuckDBVector, DuckDBVector];
  const terms = new TextList();
  const ends: number[] = [];
  const ids: number[] = [];
  const postingDocs = new ColumnWriter(join(target.columnsDir, 'postingDocs.i32'), 'i32');
  const postingTf = new ColumnWriter(join(target.columnsDir, 'postingTf.f32'), 'f32');
  const postingPrimary = new ColumnWriter(join(target.columnsDir, 'postingPrimary.u8'), 'u8');
  let p = 0;
  try {
    await eachMergedTerm(paths, (termBytes, runs) => {
      const term = termBytes.toString('utf8');
      let inText = false;
      for (const run of runs) {
        for (let i = 0; i < run.count; i++, p++) {
          const [doc, tf, flags] = [run.docAt(i), run.tfAt(i), run.flagsAt(i)];
          // Float32 halves the memory; the weights (multiples of 0.5) keep every tf exact in it.
          if (Math.fround(tf) !== tf) throw new Error(`${target.postingsTable}: tf ${tf} is not exact as a float32`);
          postingDocs.push(doc);
          postingTf.push(tf);
          postingPrimary.push(flags & PRIMARY ? 1 : 0);
          inText ||= (flags & IN_TEXT) !== 0;
          termColumn.setItem(postings.row, term);
          docColumn.setItem(postings.row, doc);
          tfColumn.setItem(postings.row, tf);
          primaryColumn.setItem(postings.row, (flags & PRIMARY) !== 0);
          normColumn.setItem(postings.row, target.norms[doc]!);
          postings.next();
        }
      }
      terms.append(termBytes);
      ends.push(p);
      ids.push(inText ? 0 : 1);
      if (!inText) {
        idterms.vectors[0]!.setItem(idterms.row, term);
        idterms.next();
      }
    });
  } finally {
    postings.close();
    idterms.close();
  }
  const columns = { postingDocs: postingDocs.close(), postingTf: postingTf.close(), postingPrimary: postingPrimary.close() };
  if (p !== target.postings) throw new Error(`${target.postingsTable}: ${p} postings merged, ${target.postings} written to the runs`);
  return { documents: target.documents, terms: terms.finish(), postingEnds: Uint32Array.from(ends), ...columns, norms: target.norms, idTerms: Uint8Array.from(ids) };
}

/** Merges the titles' run files at `paths` into the `titles` table (title, doc), returning the pairs. */
export async function mergeTitles(paths: readonly string[], connection: DuckDBConnection, table: string): Promise<TitlePairs> {
  const titles = await ChunkAppender.open(connection, table, [VARCHAR, INTEGER]);
  const [titleColumn, docColumn] = titles.vectors as [DuckDBVector, DuckDBVector];
  const texts = new TextList();
  const docs: number[] = [];
  try {
    await eachMergedTerm(paths, (titleBytes, runs) => {
      const title = titleBytes.toString('utf8');
      for (const run of runs) {
        for (let i = 0; i < run.count; i++) {
          const doc = run.docAt(i);
          titleColumn.setItem(titles.row, title);
          docColumn.setItem(titles.row, doc);
          titles.next();
          texts.append(titleBytes);
          docs.push(doc);
        }
      }
    });
  } finally {
    titles.close();
  }
  return { texts: texts.finish(), docs: Int32Array.from(docs) };
}

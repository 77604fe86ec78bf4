/**
 * `search-index.bin`: every stored source's index arrays (`source-index.ts`) and page offsets
 * (`pages.ts`) as the exporter built them, in a form a runner loads with a few large reads into one
 * SharedArrayBuffer and views as typed arrays where they lie, with no parsing, stemming or sorting.
 *
 * Layout (little-endian throughout; typed arrays are read in the machine's order, so a big-endian
 * machine refuses the file and builds the index from `service.db` instead):
 * - header, 16 bytes: `MAGIC` (8 bytes), the format version (u32), `BYTE_ORDER_MARK` (u32);
 * - the arrays, each at an offset that is a multiple of 8, so every typed array can view it;
 * - the table of contents as JSON: per source its documents and each array's type, offset, length;
 * - trailer, 16 bytes: the table of contents' offset (u64) and length (u32), the format version (u32).
 * The file's integrity is the manifest's sha256, checked when it is downloaded; the reader checks
 * that every array lies inside the file and that the arrays' lengths agree with each other.
 */
import { endianness } from 'node:os';
import { open, type FileHandle } from 'node:fs/promises';
import { z } from 'zod';
import type { StoredLookupSource } from './page-sql.ts';
import type { PageOffsets } from './pages.ts';
import type { SourceIndex } from './index-arrays.ts';
import { type IndexArrays, withPostingExtras } from './posting-extras.ts';
import type { ColumnFile } from './posting-merge.ts';
import type { SortedTexts } from './sorted-texts.ts';

export const INDEX_FILE_NAME = 'search-index.bin';
/** Raised whenever the layout or the meaning of an array changes: a runner falls back on any other version. */
export const INDEX_FORMAT_VERSION = 1;
const MAGIC = Buffer.from('UDA-SIDX', 'latin1');
const BYTE_ORDER_MARK = 0x01020304;
const HEADER_BYTES = 16;
const TRAILER_BYTES = 16;
/** One read is at most this many bytes (Node refuses reads of 2 GiB or more). */
const READ_BYTES = 1 << 28;

export interface SourceFiles {
  readonly index: SourceIndex;
  readonly pages: PageOffsets;
}

type PostingColumn = 'postingDocs' | 'postingTf' | 'postingPrimary';

/**
 * What the file holds of a source: its arrays without the block maxima, which a reader computes.
 * The per-posting arrays may be files of their own (the exporter's merge streams them there), copied in.
 */
export interface WrittenSourceFiles {
  readonly index: Omit<IndexArrays, PostingColumn> & Record<PostingColumn, IndexArrays[PostingColumn] | ColumnFile>;
  readonly pages: PageOffsets;
}

const ARRAY_TYPES = { u8: Uint8Array, u32: Uint32Array, i32: Int32Array, f32: Float32Array, f64: Float64Array } as const;
type ArrayType = keyof typeof ARRAY_TYPES;
interface ArrayOf { u8: Uint8Array; u32: Uint32Array; i32: Int32Array; f32: Float32Array; f64: Float64Array }
type AnyArray = ArrayOf[ArrayType];

const tocSchema = z.object({
  sources: z.array(z.object({
    source: z.string(),
    documents: z.number().int().nonnegative(),
    arrays: z.record(z.string(), z.object({ type: z.enum(['u8', 'u32', 'i32', 'f32', 'f64']), offset: z.number().int().nonnegative(), length: z.number().int().nonnegative() })),
  })),
});
type Toc = z.infer<typeof tocSchema>;

function typeOf(array: AnyArray | ColumnFile): ArrayType {
  if ('path' in array) return array.type;
  const entry = Object.entries(ARRAY_TYPES).find(([, constructor]) => array instanceof constructor);
  return entry![0] as ArrayType;
}

/** One source's arrays by name: the index's, its texts' bytes and ends, and the page offsets flattened. */
function namedArrays({ index, pages }: WrittenSourceFiles): Record<string, AnyArray | ColumnFile> {
  const texts = (name: string, t: SortedTexts) => ({ [`${name}Bytes`]: new Uint8Array(t.bytes.buffer, t.bytes.byteOffset, t.bytes.byteLength), [`${name}Ends`]: t.ends });
  const more = [...pages.more].flatMap(([doc, rows]) => rows.map(([start, length]) => [doc, start, length] as const));
  return {
    ...texts('terms', index.terms), postingEnds: index.postingEnds, postingDocs: index.postingDocs, postingTf: index.postingTf,
    postingPrimary: index.postingPrimary, norms: index.norms, idTerms: index.idTerms, ...texts('stems', index.stems),
    stemEnds: index.stemEnds, stemTerms: index.stemTerms, ...texts('titles', index.titles), titleDocs: index.titleDocs,
    pageStarts: pages.starts, pageLengths: pages.lengths,
    moreDocs: Int32Array.from(more, (m) => m[0]), moreStarts: Float64Array.from(more, (m) => m[1]), moreLengths: Uint32Array.from(more, (m) => m[2]),
  };
}

function checkByteOrder(): void {
  if (endianness() !== 'LE') throw new Error(`${INDEX_FILE_NAME} is little-endian; this machine is not`);
}

/** An index file being written one source at a time, so a writer holds one source's arrays at once. */
export interface IndexFileWriter {
  /** Appends the source's arrays; the caller may drop them once this resolves. */
  add(source: StoredLookupSource, files: WrittenSourceFiles): Promise<void>;
  /** Writes the table of contents, the trailer and the header: only then is the file readable. */
  close(): Promise<void>;
  /** Closes the file without finishing it (the build failed; its folder is removed). */
  abort(): Promise<void>;
}

export async function openIndexFile(path: string): Promise<IndexFileWriter> {
  checkByteOrder();
  const file = await open(path, 'w');
  const toc: Toc = { sources: [] };
  let offset = HEADER_BYTES;
  return {
    async add(source, files) {
      const arrays: Toc['sources'][number]['arrays'] = {};
      for (const [name, array] of Object.entries(namedArrays(files))) {
        offset = Math.ceil(offset / 8) * 8;
        const bytes = 'path' in array ? await copyColumn(array, file, offset) : await writeArray(array, file, offset);
        arrays[name] = { type: typeOf(array), offset, length: array.length };
        offset += bytes;
      }
      toc.sources.push({ source, documents: files.index.documents, arrays });
    },
    async close() {
      try {
        const tocBytes = Buffer.from(JSON.stringify(toc));
        await file.write(tocBytes, 0, tocBytes.length, offset);
        const trailer = Buffer.alloc(TRAILER_BYTES);
        trailer.writeBigUInt64LE(BigInt(offset), 0);
        trailer.writeUInt32LE(tocBytes.length, 8);
        trailer.writeUInt32LE(INDEX_FORMAT_VERSION, 12);
        await file.write(trailer, 0, TRAILER_BYTES, offset + tocBytes.length);
        const header = Buffer.alloc(HEADER_BYTES);
        MAGIC.copy(header, 0);
        header.writeUInt32LE(INDEX_FORMAT_VERSION, 8);
        header.writeUInt32LE(BYTE_ORDER_MARK, 12);
        await file.write(header, 0, HEADER_BYTES, 0);
      } finally {
        await file.close();
      }
    },
    abort: () => file.close(),
  };
}

async function writeArray(array: AnyArray, into: FileHandle, offset: number): Promise<number> {
  await into.write(Buffer.from(array.buffer, array.byteOffset, array.byteLength), 0, array.byteLength, offset);
  return array.byteLength;
}

/** Copies a column file into the index file at `offset`, a read at a time; returns its bytes. */
async function copyColumn(column: ColumnFile, into: FileHandle, offset: number): Promise<number> {
  const bytes = column.length * ARRAY_TYPES[column.type].BYTES_PER_ELEMENT;
  const source = await open(column.path, 'r');
  try {
    const buffer = Buffer.allocUnsafe(Math.min(READ_BYTES, 4 << 20, Math.max(bytes, 1)));
    for (let done = 0; done < bytes;) {
      const { bytesRead } = await source.read(buffer, 0, Math.min(buffer.length, bytes - done), done);
      if (bytesRead === 0) throw new Error(`${column.path} ends at byte ${done} of ${bytes}`);
      await into.write(buffer, 0, bytesRead, offset + done);
      done += bytesRead;
    }
  } finally {
    await source.close();
  }
  return bytes;
}

/** Writes every source's arrays to `path`. */
export async function writeIndexFile(path: string, sources: ReadonlyMap<StoredLookupSource, SourceFiles>): Promise<void> {
  const writer = await openIndexFile(path);
  try {
    for (const [source, files] of sources) await writer.add(source, files);
  } catch (error) {
    await writer.abort();
    throw error;
  }
  await writer.close();
}

async function readAt(file: FileHandle, into: Uint8Array, position: number): Promise<void> {
  for (let done = 0; done < into.length;) {
    const { bytesRead } = await file.read(into, done, Math.min(READ_BYTES, into.length - done), position + done);
    if (bytesRead === 0) throw new Error(`${INDEX_FILE_NAME} ends before byte ${position + into.length}`);
    done += bytesRead;
  }
}

/** The table of contents and where it starts; undefined for a file of another format version. */
async function readToc(file: FileHandle, size: number): Promise<{ toc: Toc; tocOffset: number } | undefined> {
  if (size < HEADER_BYTES + TRAILER_BYTES) throw new Error(`${INDEX_FILE_NAME} is ${size} bytes, too short`);
  const header = Buffer.alloc(HEADER_BYTES);
  const trailer = Buffer.alloc(TRAILER_BYTES);
  await readAt(file, header, 0);
  await readAt(file, trailer, size - TRAILER_BYTES);
  if (!header.subarray(0, MAGIC.length).equals(MAGIC)) throw new Error(`${INDEX_FILE_NAME} does not start with its magic bytes`);
  if (header.readUInt32LE(8) !== INDEX_FORMAT_VERSION) return undefined;
  if (header.readUInt32LE(12) !== BYTE_ORDER_MARK) throw new Error(`${INDEX_FILE_NAME} has a wrong byte order mark`);
  if (trailer.readUInt32LE(12) !== INDEX_FORMAT_VERSION) throw new Error(`${INDEX_FILE_NAME} is damaged: its trailer does not match its header`);
  const tocOffset = Number(trailer.readBigUInt64LE(0));
  const tocLength = trailer.readUInt32LE(8);
  if (tocOffset < HEADER_BYTES || tocOffset + tocLength + TRAILER_BYTES !== size) throw new Error(`${INDEX_FILE_NAME}: its table of contents is out of place`);
  const tocBytes = Buffer.alloc(tocLength);
  await readAt(file, tocBytes, tocOffset);
  return { toc: tocSchema.parse(JSON.parse(tocBytes.toString('utf8'))), tocOffset };
}

/**
 * Every source's arrays from the file at `path`, viewing one SharedArrayBuffer that holds the file's
 * arrays (the ranking threads share it); undefined when the file has another format version.
 */
export async function readIndexFile(path: string): Promise<Map<StoredLookupSource, SourceFiles> | undefined> {
  checkByteOrder();
  const file = await open(path, 'r');
  try {
    const { size } = await file.stat();
    const contents = await readToc(file, size);
    if (!contents) return undefined;
    const memory = new SharedArrayBuffer(contents.tocOffset);
    await readAt(file, new Uint8Array(memory, HEADER_BYTES), HEADER_BYTES);
    return new Map(contents.toc.sources.map((entry) => [entry.source as StoredLookupSource, sourceFiles(memory, entry)]));
  } finally {
    await file.close();
  }
}

function viewer(memory: SharedArrayBuffer, entry: Toc['sources'][number]) {
  return <T extends ArrayType>(name: string, type: T): ArrayOf[T] => {
    const spec = entry.arrays[name];
    if (!spec || spec.type !== type) throw new Error(`${INDEX_FILE_NAME}: ${entry.source} has no ${type} array ${name}`);
    // The union of constructors would pick the ArrayBuffer overload; every one of them takes a SharedArrayBuffer.
    const constructor = ARRAY_TYPES[type] as unknown as { new (buffer: ArrayBufferLike, offset: number, length: number): ArrayOf[T]; readonly BYTES_PER_ELEMENT: number };
    if (spec.offset % constructor.BYTES_PER_ELEMENT !== 0 || spec.offset + spec.length * constructor.BYTES_PER_ELEMENT > memory.byteLength) {
      throw new Error(`${INDEX_FILE_NAME}: ${entry.source} ${name} lies outside the file`);
    }
    return new constructor(memory, spec.offset, spec.length);
  };
}

function sourceFiles(memory: SharedArrayBuffer, entry: Toc['sources'][number]): SourceFiles {
  const view = viewer(memory, entry);
  const texts = (name: string): SortedTexts => {
    const bytes = view(`${name}Bytes`, 'u8');
    return { bytes: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), ends: view(`${name}Ends`, 'u32') };
  };
  const index = withPostingExtras({
    documents: entry.documents, terms: texts('terms'), postingEnds: view('postingEnds', 'u32'), postingDocs: view('postingDocs', 'i32'),
    postingTf: view('postingTf', 'f32'), postingPrimary: view('postingPrimary', 'u8'), norms: view('norms', 'f64'), idTerms: view('idTerms', 'u8'),
    stems: texts('stems'), stemEnds: view('stemEnds', 'u32'), stemTerms: view('stemTerms', 'i32'), titles: texts('titles'), titleDocs: view('titleDocs', 'i32'),
  });
  const [moreDocs, moreStarts, moreLengths] = [view('moreDocs', 'i32'), view('moreStarts', 'f64'), view('moreLengths', 'u32')];
  const more = new Map<number, [number, number][]>();
  moreDocs.forEach((doc, i) => more.set(doc, [...(more.get(doc) ?? []), [moreStarts[i]!, moreLengths[i]!]]));
  const pages: PageOffsets = { starts: view('pageStarts', 'f64'), lengths: view('pageLengths', 'u32'), more };
  checkLengths(entry.source, index, pages, moreDocs.length === moreStarts.length && moreDocs.length === moreLengths.length);
  return { index, pages };
}

/** The arrays' lengths agree as `source-index.ts` builds them, so an index read here cannot index past an array. */
function checkLengths(source: string, index: SourceIndex, pages: PageOffsets, moreAgree: boolean): void {
  const terms = index.terms.ends.length;
  const postings = index.postingDocs.length;
  const textsAgree = (t: SortedTexts) => (t.ends.at(-1) ?? 0) === t.bytes.length;
  const agree = [
    index.postingEnds.length === terms && index.idTerms.length === terms && (index.postingEnds.at(-1) ?? 0) === postings,
    index.postingTf.length === postings && index.postingPrimary.length === postings && index.norms.length === index.documents + 1,
    index.stemEnds.length === index.stems.ends.length && (index.stemEnds.at(-1) ?? 0) === index.stemTerms.length && index.stemTerms.length === terms,
    index.titleDocs.length === index.titles.ends.length && textsAgree(index.terms) && textsAgree(index.stems) && textsAgree(index.titles),
    pages.starts.length === index.documents + 1 && pages.lengths.length === index.documents + 1 && moreAgree,
  ];
  if (agree.includes(false)) throw new Error(`${INDEX_FILE_NAME}: the arrays of ${source} disagree in length`);
}

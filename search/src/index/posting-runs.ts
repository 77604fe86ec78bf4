/**
 * A source's postings gathered one slice of documents at a time, in bounded memory: a slice's
 * (term, doc) postings are accumulated as the documents stream in (in `doc` order), then written to
 * a run file sorted by term, each term's postings in `doc` order. `posting-merge.ts` merges the runs.
 *
 * A run file is a sequence of terms in UTF-8 byte order (DuckDB's VARCHAR order), each:
 * `u32 byte length, the term's UTF-8 bytes, u32 count, count × i32 doc, count × f64 tf, count × u8 flags`.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { compareUtf8 } from '../vocabulary/stems.ts';

/** A posting's flags, a bit each: the term is a whole word of a primary field; it is in a field that is not an id. */
export const PRIMARY = 1;
export const IN_TEXT = 2;

/** Bytes a run writer or reader moves at a time. */
const IO_BYTES = 1 << 20;

function grown<T extends Int32Array | Float64Array | Uint8Array>(array: T, needed: number): T {
  if (needed <= array.length) return array;
  const copy = new (array.constructor as new (length: number) => T)(Math.max(needed, array.length * 2));
  copy.set(array);
  return copy;
}

/** One slice's postings as typed arrays, a slot per (term, doc), appended in `doc` order. */
export class SlicePostings {
  private readonly ids = new Map<string, number>();
  private readonly terms: string[] = [];
  /** Per term id: the last document that had it, and that posting's slot. */
  private lastDoc = new Int32Array(1 << 12);
  private lastSlot = new Int32Array(1 << 12);
  private termOf = new Int32Array(1 << 16);
  private docOf = new Int32Array(1 << 16);
  private tfOf = new Float64Array(1 << 16);
  private flagsOf = new Uint8Array(1 << 16);
  postings = 0;

  /** One occurrence of `term` in `doc` (never smaller than the previous call's), in a field of `weight`. */
  add(term: string, doc: number, weight: number, flags: number): void {
    let id = this.ids.get(term);
    if (id === undefined) {
      id = this.terms.length;
      this.ids.set(term, id);
      this.terms.push(term);
      this.lastDoc = grown(this.lastDoc, id + 1);
      this.lastSlot = grown(this.lastSlot, id + 1);
    } else if (this.lastDoc[id] === doc) {
      const slot = this.lastSlot[id]!;
      this.tfOf[slot]! += weight;
      this.flagsOf[slot]! |= flags;
      return;
    }
    const slot = this.postings++;
    if (slot === this.docOf.length) this.growSlots(slot + 1);
    this.lastDoc[id] = doc;
    this.lastSlot[id] = slot;
    this.termOf[slot] = id;
    this.docOf[slot] = doc;
    this.tfOf[slot] = weight;
    this.flagsOf[slot] = flags;
  }

  private growSlots(needed: number): void {
    this.termOf = grown(this.termOf, needed);
    this.docOf = grown(this.docOf, needed);
    this.tfOf = grown(this.tfOf, needed);
    this.flagsOf = grown(this.flagsOf, needed);
  }

  /** Writes the slice as a run file at `path`, sorted by term (a counting sort keeps each term's documents in order). */
  async writeRun(path: string): Promise<void> {
    const order = sortedIds(this.terms);
    const counts = new Int32Array(this.terms.length);
    for (let slot = 0; slot < this.postings; slot++) counts[this.termOf[slot]!]!++;
    const next = new Int32Array(this.terms.length);
    let at = 0;
    for (const id of order) {
      next[id] = at;
      at += counts[id]!;
    }
    const docs = new Int32Array(this.postings);
    const tfs = new Float64Array(this.postings);
    const flags = new Uint8Array(this.postings);
    for (let slot = 0; slot < this.postings; slot++) {
      const to = next[this.termOf[slot]!]!++;
      docs[to] = this.docOf[slot]!;
      tfs[to] = this.tfOf[slot]!;
      flags[to] = this.flagsOf[slot]!;
    }
    const file = await open(path, 'w');
    try {
      await writeTerms(file, order.map((id) => this.terms[id]!), order.map((id) => counts[id]!), { docs, tfs, flags });
    } finally {
      await file.close();
    }
  }
}

/**
 * The term ids in the terms' UTF-8 byte order. JavaScript's own string order is UTF-16's, the same
 * unless a string holds a character from U+D800 up (a surrogate pair sorts before U+E000–U+FFFF in
 * UTF-16, after them in UTF-8): only then is the slower `compareUtf8` needed.
 */
function sortedIds(terms: readonly string[]): number[] {
  const ids = terms.map((_, id) => id);
  if (terms.some((term) => /[\ud800-\uffff]/.test(term))) return ids.sort((a, b) => compareUtf8(terms[a]!, terms[b]!));
  return ids.sort((a, b) => (terms[a]! < terms[b]! ? -1 : terms[a]! > terms[b]! ? 1 : 0));
}

/** Writes the terms (in order) and their postings (together in the same order, `counts[i]` for term i) as a run. */
async function writeTerms(file: FileHandle, terms: readonly string[], counts: readonly number[], postings: { docs: Int32Array; tfs: Float64Array; flags: Uint8Array }): Promise<void> {
  let buffer = Buffer.allocUnsafe(IO_BYTES);
  let used = 0;
  let first = 0;
  for (const [i, term] of terms.entries()) {
    const count = counts[i]!;
    const termBytes = Buffer.byteLength(term);
    const needed = 8 + termBytes + count * 13;
    if (used + needed > buffer.length) {
      await file.write(buffer, 0, used);
      used = 0;
      if (needed > buffer.length) buffer = Buffer.allocUnsafe(needed);
    }
    used = buffer.writeUInt32LE(termBytes, used);
    used += buffer.write(term, used, 'utf8');
    used = buffer.writeUInt32LE(count, used);
    const { docs, tfs, flags } = postings;
    used += Buffer.from(docs.buffer, first * 4, count * 4).copy(buffer, used);
    used += Buffer.from(tfs.buffer, first * 8, count * 8).copy(buffer, used);
    used += Buffer.from(flags.buffer, first, count).copy(buffer, used);
    first += count;
  }
  if (used > 0) await file.write(buffer, 0, used);
}

/** Reads a run file term by term through one buffer. */
export class RunReader {
  private buffer = Buffer.allocUnsafe(IO_BYTES);
  private start = 0;
  private end = 0;
  private eof = false;
  term = Buffer.alloc(0);
  count = 0;
  private docs = 0;
  private readonly file: FileHandle;

  private constructor(file: FileHandle) {
    this.file = file;
  }

  static async open(path: string): Promise<RunReader> {
    return new RunReader(await open(path, 'r'));
  }

  /** Moves to the next term; false at the end of the run. */
  async advance(): Promise<boolean> {
    this.start = this.docs + this.count * 13;
    if (!(await this.fill(4))) return false;
    const termBytes = this.buffer.readUInt32LE(this.start);
    await this.need(8 + termBytes);
    this.count = this.buffer.readUInt32LE(this.start + 4 + termBytes);
    await this.need(8 + termBytes + this.count * 13);
    this.term = this.buffer.subarray(this.start + 4, this.start + 4 + termBytes);
    this.docs = this.start + 8 + termBytes;
    return true;
  }

  docAt(i: number): number {
    return this.buffer.readInt32LE(this.docs + i * 4);
  }

  tfAt(i: number): number {
    return this.buffer.readDoubleLE(this.docs + this.count * 4 + i * 8);
  }

  flagsAt(i: number): number {
    return this.buffer[this.docs + this.count * 12 + i]!;
  }

  private async need(bytes: number): Promise<void> {
    if (!(await this.fill(bytes))) throw new Error('a run file ends inside a term');
  }

  /** At least `bytes` bytes from `start` in the buffer; false when the file ends first (cleanly: with none). */
  private async fill(bytes: number): Promise<boolean> {
    while (this.end - this.start < bytes) {
      if (this.eof) {
        if (this.end === this.start) return false;
        throw new Error('a run file ends inside a term');
      }
      if (this.start > 0) {
        this.buffer.copy(this.buffer, 0, this.start, this.end);
        this.end -= this.start;
        this.docs -= this.start;
        this.start = 0;
      }
      if (bytes > this.buffer.length) this.buffer = Buffer.concat([this.buffer.subarray(0, this.end)], Math.max(bytes, this.buffer.length * 2));
      const { bytesRead } = await this.file.read(this.buffer, this.end, this.buffer.length - this.end);
      if (bytesRead === 0) this.eof = true;
      this.end += bytesRead;
    }
    return true;
  }

  close(): Promise<void> {
    return this.file.close();
  }
}

/**
 * A sorted list of strings packed as UTF-8 in one buffer, for the in-memory search index's term
 * dictionary and titles: millions of entries without a JS string (and its header) per entry.
 *
 * Sorted by UTF-8 bytes, which is how DuckDB sorts VARCHAR: the lists keep the order the exporter
 * wrote (`ORDER BY term`, `ORDER BY title`), so position i here is position i there. The bytes
 * 0xF5–0xFF never occur in UTF-8, so `key ‖ 0xFF` sorts after every string that starts with
 * `key` and before every other string after `key`: `[key, key ‖ 0xFF)` is a prefix's range.
 */

export interface SortedTexts {
  readonly bytes: Buffer;
  /** `ends[i]` is where entry i ends in `bytes`; it starts where entry i − 1 ends. */
  readonly ends: Uint32Array;
}

const AFTER_EVERY_CONTINUATION = Buffer.from([0xff]);

export function textCount(texts: SortedTexts): number {
  return texts.ends.length;
}

export function textStart(texts: SortedTexts, i: number): number {
  return i === 0 ? 0 : texts.ends[i - 1]!;
}

/** Entry i's length in bytes. */
export function textLength(texts: SortedTexts, i: number): number {
  return texts.ends[i]! - textStart(texts, i);
}

export function textAt(texts: SortedTexts, i: number): string {
  return texts.bytes.toString('utf8', textStart(texts, i), texts.ends[i]);
}

/** The first entry not before `key` (the count when every entry is before it). */
export function lowerBound(texts: SortedTexts, key: Buffer): number {
  let low = 0;
  let high = texts.ends.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (texts.bytes.compare(key, 0, key.length, textStart(texts, middle), texts.ends[middle]) < 0) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** `[first, end)`: the entries that start with `prefix` (equal to it included). */
export function prefixRange(texts: SortedTexts, prefix: Buffer): [number, number] {
  return [lowerBound(texts, prefix), lowerBound(texts, Buffer.concat([prefix, AFTER_EVERY_CONTINUATION]))];
}

/** `[first, end)`: the entries equal to `key`. */
export function equalRange(texts: SortedTexts, key: Buffer): [number, number] {
  const first = lowerBound(texts, key);
  let end = first;
  while (end < texts.ends.length && textLength(texts, end) === key.length && texts.bytes.compare(key, 0, key.length, textStart(texts, end), texts.ends[end]) === 0) end++;
  return [first, end];
}

/** Builds a `SortedTexts` from entries appended in order; refuses an entry out of order. */
export class SortedTextsBuilder {
  private bytes: Buffer;
  private readonly ends: Uint32Array;
  private count = 0;
  private used = 0;

  constructor(entries: number, bytesHint: number) {
    this.ends = new Uint32Array(entries);
    this.bytes = Buffer.allocUnsafe(Math.max(bytesHint, 16));
  }

  append(text: string): void {
    if (this.count === this.ends.length) throw new Error(`more entries than the ${this.ends.length} announced`);
    const needed = this.used + Buffer.byteLength(text);
    if (needed > this.bytes.length) this.grow(needed);
    const start = this.used;
    this.used += this.bytes.write(text, start, 'utf8');
    if (this.count > 0 && this.bytes.compare(this.bytes, textStart(this.texts(), this.count - 1), this.ends[this.count - 1], start, this.used) < 0) {
      throw new Error(`entries out of order at ${this.count}: "${text}"`);
    }
    this.ends[this.count++] = this.used;
  }

  finish(): SortedTexts {
    if (this.count !== this.ends.length) throw new Error(`${this.count} entries of the ${this.ends.length} announced`);
    // A copy of the used bytes, so the spare capacity is not kept for the version's lifetime.
    return { bytes: Buffer.from(this.bytes.subarray(0, this.used)), ends: this.ends };
  }

  private texts(): SortedTexts {
    return { bytes: this.bytes, ends: this.ends };
  }

  private grow(needed: number): void {
    const grown = Buffer.allocUnsafe(Math.max(needed, this.bytes.length * 2));
    this.bytes.copy(grown, 0, 0, this.used);
    this.bytes = grown;
  }
}

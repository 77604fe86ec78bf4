/**
 * The tier rule: 0, a primary text (a title, an author, a company name, a ticker, an arXiv id)
 * equals the words (compared stem by stem); 1, it starts with them as whole words; 2, every word is
 * a whole word of the primary fields; 3, the rest.
 */
import { lowerBound, textLength } from '../index/sorted-texts.ts';
import type { SourceIndex } from '../index/source-index.ts';

const AFTER_EVERY_CONTINUATION = 0xff;

/** The documents whose title starts with the phrase as whole words (bits over every document), and those whose title equals it. */
export interface Titled {
  readonly bits: Uint32Array;
  readonly exact: Set<number>;
}

/**
 * The documents with a title equal to the phrase (tier 0) or starting with it as whole words
 * (tier 1), as a bit set of every document (`bits`, cleared here: it stays in the CPU's cache while
 * the ranking tests every match against it) and the few exact ones. Titles are space-joined
 * stems, so the range `[phrase, phrase ‖ ' ' ‖ 0xFF)` holds exactly those titles.
 */
export function titledDocs(index: SourceIndex, bits: Uint32Array, phrase: string): Titled {
  const key = Buffer.from(phrase, 'utf8');
  const first = lowerBound(index.titles, key);
  const end = lowerBound(index.titles, Buffer.concat([key, Buffer.from([0x20, AFTER_EVERY_CONTINUATION])]));
  bits.fill(0);
  const exact = new Set<number>();
  for (let i = first; i < end; i++) {
    const doc = index.titleDocs[i]!;
    bits[doc >>> 5]! |= 1 << (doc & 31);
    if (textLength(index.titles, i) === key.length) exact.add(doc);
  }
  return { bits, exact };
}

/** A match's tier; `outside`: its words matched outside the primary fields. */
export function tierOf(titled: Titled, doc: number, outside: number): number {
  if ((titled.bits[doc >>> 5]! & (1 << (doc & 31))) !== 0) return titled.exact.has(doc) ? 0 : 1;
  return outside === 0 ? 2 : 3;
}

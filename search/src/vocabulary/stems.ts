/**
 * English stems (Porter2, the Snowball English stemmer, from `wink-porter2-stemmer`): "eggs" and
 * "egg" are `egg`, "strawberries" and "strawberry" are `strawberri`. The index's term dictionary
 * and titles are stemmed when its arrays are built (`source-index.ts`: by the exporter for the
 * runner files, or by a runner from an older export), and each query word when the runner ranks,
 * so the `_search_*` tables stay the terms as written.
 */
import porter2 from 'wink-porter2-stemmer';

/** Porter2 is defined on English letters: a term with digits or other scripts is its own stem. */
const ENGLISH_WORD = /^[a-z]+$/;

export function stemOf(term: string): string {
  return ENGLISH_WORD.test(term) ? porter2(term) : term;
}

/** The stem of each space-separated word; `cache` keeps the stems already computed (titles repeat words). */
export function stemPhrase(phrase: string, cache: Map<string, string>): string {
  return phrase
    .split(' ')
    .map((word) => {
      let stem = cache.get(word);
      if (stem === undefined) {
        stem = stemOf(word);
        cache.set(word, stem);
      }
      return stem;
    })
    .join(' ');
}

/**
 * Orders strings as their UTF-8 bytes do (as DuckDB and `SortedTexts` order them): JavaScript's `<`
 * compares UTF-16 units, which puts characters beyond U+FFFF before U+E000–U+FFFF.
 */
export function compareUtf8(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // Both at or above the surrogates: code points order as UTF-8 does (a pair is one point above U+FFFF).
    if (x >= 0xd800 && y >= 0xd800) return a.codePointAt(i)! - b.codePointAt(i)!;
    return x - y;
  }
  return a.length - b.length;
}

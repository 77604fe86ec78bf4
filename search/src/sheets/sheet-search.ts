/**
 * Keyword search over one connected sheet, with the stored lookups' forgiveness: a row matches when
 * a column contains the text (case-insensitive), or when its text columns hold every word of it as
 * typed, by its Porter2 stem, or within its typo budget. The runner runs the SQL built here in a
 * sandbox over the sheet (`query-runner/src/sheets/search.ts`).
 */
import { quoteLiteral } from '@uda/shared/duckdb';
import { prefixRange, textAt, type SortedTexts } from '../index/sorted-texts.ts';
import { typoBudget } from '../query/terms.ts';
import { typoMatches } from '../query/typos.ts';
import { stemOf } from '../vocabulary/stems.ts';

/** `LIKE` wildcards in the text are literal: the search is a plain substring match. */
export function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** A word's accepted terms by distance: [exact, same stem, one typo, two typos]. */
export type WordTerms = readonly [string[], string[], string[], string[]];

/**
 * The sheet's terms with the stem `stem`. A Porter2 stem is its word's start, save a last `y` made
 * `i` ("strawberry" is `strawberri`), so the terms starting with the stem less its last letter hold
 * them all: the dictionary is read over that range only, not stemmed whole.
 */
function termsWithStem(terms: SortedTexts, stem: string): string[] {
  const [first, end] = prefixRange(terms, Buffer.from(stem.slice(0, Math.max(1, stem.length - 1)), 'utf8'));
  const found: string[] = [];
  for (let t = first; t < end; t++) if (stemOf(textAt(terms, t)) === stem) found.push(textAt(terms, t));
  return found;
}

/** What each query word accepts among the sheet's distinct terms (sorted by UTF-8 bytes). */
export function sheetWordTerms(terms: SortedTexts, words: readonly string[], checkDeadline: () => void): WordTerms[] {
  return words.map((word) => {
    const sameStem = termsWithStem(terms, stemOf(word)).filter((term) => term !== word);
    // A typo's other forms count as the typo (as in the stored lookups): "strawbery" finds "strawberries".
    const typos = typoMatches(terms, word, typoBudget(word), checkDeadline).flatMap((m) =>
      termsWithStem(terms, stemOf(textAt(terms, m.term))).map((term) => ({ term, typos: m.typos })));
    const known = new Set([word, ...sameStem]);
    const within = (n: number) => [...new Set(typos.filter((m) => m.typos === n && !known.has(m.term)).map((m) => m.term))];
    return [[word], sameStem, within(1), within(2)] as const satisfies WordTerms;
  });
}

const termList = (terms: readonly string[]) => `[${terms.map(quoteLiteral).join(', ')}]::VARCHAR[]`;

/** A word's distance in a row (0 exact … 3 two typos), NULL when the row lacks it. */
export function distanceSql(word: WordTerms): string {
  const cases = word.flatMap((terms, distance) => (terms.length ? [`WHEN list_has_any(_terms, ${termList(terms)}) THEN ${distance}`] : []));
  return `CASE ${cases.join(' ')} END`;
}


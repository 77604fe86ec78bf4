/**
 * Keyword search over one connected sheet, with the stored lookups' forgiveness: a row matches when
 * a column contains the text (case-insensitive), or when its text columns hold every word of it as
 * typed, by its Porter2 stem, or within its typo budget. The runner finds the rows containing the
 * text in a sandbox over the sheet (`query-runner/src/sheets/search.ts`); the words' matches and
 * the order are found here, over the sheet's term index (kept per sheet version).
 */
import { equalRange, prefixRange, textAt, type SortedTexts } from '../index/sorted-texts.ts';
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

/** A sheet's term dictionary and, aligned with it, the rows (ascending row ids) holding each term. */
export interface SheetTermIndex {
  readonly terms: SortedTexts;
  readonly rows: readonly Int32Array[];
  /** One past the largest row id. */
  readonly rowCount: number;
}

const ABSENT = 255;

/** Each row's distance for one word (0 exact … 3 two typos), ABSENT where the row lacks it. */
function wordDistances(index: SheetTermIndex, word: WordTerms): Uint8Array {
  const distances = new Uint8Array(index.rowCount).fill(ABSENT);
  word.forEach((terms, distance) => {
    for (const term of terms) {
      const [at, end] = equalRange(index.terms, Buffer.from(term, 'utf8'));
      if (at === end) continue;
      for (const row of index.rows[at]!) if (distances[row]! > distance) distances[row] = distance;
    }
  });
  return distances;
}

/**
 * The row ids to answer, best first, at most `limit`: a row matches when it contains the text
 * (`containing`) or holds every word; containing rows come first, then by the sum of the words'
 * distances (a word the row lacks counts 0), then in sheet order.
 */
export function rankSheetRows(index: SheetTermIndex, words: readonly WordTerms[], containing: Iterable<number>, limit: number): number[] {
  const distances = words.map((word) => wordDistances(index, word));
  const contains = new Uint8Array(index.rowCount);
  for (const row of containing) contains[row] = 1;
  const matches: { row: number; contains: number; total: number }[] = [];
  for (let row = 0; row < index.rowCount; row++) {
    let total = 0;
    let every = true;
    for (const d of distances) {
      if (d[row] === ABSENT) every = false;
      else total += d[row]!;
    }
    if (contains[row] || every) matches.push({ row, contains: contains[row]!, total });
  }
  matches.sort((a, b) => b.contains - a.contains || a.total - b.total || a.row - b.row);
  return matches.slice(0, limit).map((m) => m.row);
}

/**
 * The readings of a query's words: as typed; each two adjacent words joined when the dictionary
 * holds their concatenation ("jp morgan" finds JPMORGAN, no typo); each word absent from the
 * dictionary split in two terms that are there ("cocacola" finds "Coca-Cola", counted as one typo).
 */
import { equalRange } from '../index/sorted-texts.ts';
import { postingCount, type SourceIndex } from '../index/source-index.ts';
import { stemOf } from '../vocabulary/stems.ts';
import { AS_TYPED, type MatchRules } from './terms.ts';
import { hasDigit, wordTerms, type WordTerms } from './word-terms.ts';

/** One reading of the query: its words' terms, the typos the reading itself costs, and the title phrase. */
export interface Reading {
  readonly words: readonly WordTerms[];
  readonly typos: number;
  readonly phrase: string;
}

/** Whether the dictionary holds `term` as a whole term. */
function inDictionary(index: SourceIndex, term: string): boolean {
  const [first, end] = equalRange(index.terms, Buffer.from(term, 'utf8'));
  return first < end;
}

/** The best split of a word into two terms the dictionary holds ("unet" is `u net`): the one whose rarer half has the most documents. */
function splitOf(index: SourceIndex, word: string): [string, string] | undefined {
  let best: [string, string] | undefined;
  let bestPostings = 0;
  for (let at = 1; at < word.length; at++) {
    const [left, right] = [word.slice(0, at), word.slice(at)];
    const [l0, l1] = equalRange(index.terms, Buffer.from(left, 'utf8'));
    const [r0, r1] = equalRange(index.terms, Buffer.from(right, 'utf8'));
    if (l0 === l1 || r0 === r1) continue;
    const postings = Math.min(postingCount(index, l0), postingCount(index, r0));
    if (postings > bestPostings) [best, bestPostings] = [[left, right], postings];
  }
  return best;
}

/**
 * The readings of `words` (`typing`: the word still being typed, the only one matched as a
 * prefix). `phrase` is every keyword, in order, when no word was dropped (the title tiers compare them all).
 */
export function readingsOf(
  index: SourceIndex, words: readonly string[], phrase: readonly string[], typing: string | undefined, rules: MatchRules, checkDeadline: () => void,
): Reading[] {
  const termsOf = (word: string, prefix: boolean) => wordTerms(index, word, rules, checkDeadline, prefix);
  const reading = (parts: WordTerms[], typos: number): Reading => ({ words: parts, typos, phrase: parts.map((p) => p.stem).join(' ') });
  const typed = words.map((word) => termsOf(word, word === typing));
  const stemOfTyped = new Map(words.map((word, i) => [word, typed[i]!.stem]));
  const readings: Reading[] = [{ words: typed, typos: 0, phrase: phrase.map((word) => stemOfTyped.get(word) ?? stemOf(word)).join(' ') }];
  if (!rules.splits) return readings;
  for (let i = 0; i + 1 < words.length; i++) {
    const joined = words[i]! + words[i + 1]!;
    if (!inDictionary(index, joined)) continue;
    readings.push(reading([...typed.slice(0, i), termsOf(joined, false), ...typed.slice(i + 2)], 0));
  }
  // A split counts as a typo, so it is looked for with the typos only.
  words.forEach((word, i) => {
    if (!rules.typos || hasDigit(word) || inDictionary(index, word)) return;
    const split = splitOf(index, word);
    if (!split) return;
    const halves = split.map((half) => wordTerms(index, half, { ...AS_TYPED, stems: rules.stems }, checkDeadline, false));
    readings.push(reading([...typed.slice(0, i), ...halves, ...typed.slice(i + 1)], 1));
  });
  return readings.filter((r) => r.words.every((w) => w.terms.length > 0));
}

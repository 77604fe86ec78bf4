/**
 * The exact number of matches, counted without scoring: a word's documents are the union of its
 * terms' posting lists, marked in a bit set; a one-word reading's count is that union's size (its
 * document frequency, kept per word, so a frequent word is counted once per version), and several
 * words' matches are the AND of their bit sets. The cost is one bit operation per posting, against
 * the tf sums, BM25 and rule keys that scoring every match costs.
 */
import { postingStart, type SourceIndex } from '../index/source-index.ts';
import type { WordTerms } from '../query/word-terms.ts';
import { scratchOf, SEARCH_OVER_PASS } from './matches.ts';
import { findPosting, hasBit, listOf, markWord } from './postings.ts';

/** Document frequencies of the words with several terms, per word (`wordTerms` keeps its words per index). */
const frequencies = new WeakMap<WordTerms, number>();

/** The word's document frequency: the documents holding any of its terms (its BM25 idf counts them). */
export function documentFrequency(index: SourceIndex, word: WordTerms, checkDeadline: () => void): number {
  if (word.terms.length === 1) return word.postings;
  let df = frequencies.get(word);
  if (df === undefined) {
    df = markWord(index, word, scratchOf(index).termBits, checkDeadline);
    frequencies.set(word, df);
  }
  return df;
}

const popcount = (x: number): number => {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24);
};

/** Marks in `into` (cleared first) the documents holding every word; returns their count. */
export function markMatches(index: SourceIndex, words: readonly WordTerms[], into: Uint32Array, checkDeadline: () => void): number {
  const [first, ...rest] = [...words].sort((a, b) => a.postings - b.postings);
  const count = markWord(index, first!, into, checkDeadline);
  if (rest.length === 0) return count;
  const { termBits } = scratchOf(index);
  for (const word of rest) {
    markWord(index, word, termBits, checkDeadline);
    for (let i = 0; i < into.length; i++) into[i]! &= termBits[i]!;
  }
  let matched = 0;
  for (let i = 0; i < into.length; i++) if (into[i] !== 0) matched += popcount(into[i]!);
  return matched;
}

/**
 * How many documents hold every word. The rarest word's documents are listed; each further word
 * keeps those it holds, by binary search in its list when it is one list much longer than them
 * (as `matches.ts` filters), else by a pass that marks its documents.
 */
export function countMatches(index: SourceIndex, words: readonly WordTerms[], checkDeadline: () => void): number {
  if (words.length === 1) return documentFrequency(index, words[0]!, checkDeadline);
  const [first, ...rest] = [...words].sort((a, b) => a.postings - b.postings);
  const { candidateBits, termBits } = scratchOf(index);
  const docs = listOf(candidateBits, markWord(index, first!, candidateBits, checkDeadline));
  let count = docs.length;
  for (const word of rest) {
    let kept = 0;
    if (word.terms.length === 1 && count * SEARCH_OVER_PASS < word.postings) {
      const start = postingStart(index, word.terms[0]!);
      for (let j = 0; j < count; j++) if (findPosting(index.postingDocs, start, start + word.postings, docs[j]!) >= 0) docs[kept++] = docs[j]!;
    } else {
      markWord(index, word, termBits, checkDeadline);
      for (let j = 0; j < count; j++) if (hasBit(termBits, docs[j]!)) docs[kept++] = docs[j]!;
    }
    count = kept;
    if (count === 0) break;
    checkDeadline();
  }
  return count;
}

/** How many documents hold every word of at least one of the readings. */
export function countMatchesOfAny(index: SourceIndex, readings: readonly (readonly WordTerms[])[], checkDeadline: () => void): number {
  const words = (index.documents >>> 5) + 2;
  const union = new Uint32Array(words);
  const one = new Uint32Array(words);
  for (const reading of readings) {
    markMatches(index, reading, one, checkDeadline);
    for (let i = 0; i < words; i++) union[i]! |= one[i]!;
  }
  let matched = 0;
  for (let i = 0; i < words; i++) if (union[i] !== 0) matched += popcount(union[i]!);
  return matched;
}

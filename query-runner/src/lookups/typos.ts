/**
 * Typo candidates from the sorted term dictionary, without reading every term: the dictionary is
 * walked as the trie it implicitly is (the terms sharing a prefix are one range of the sorted list,
 * and a range's children are found by binary search on the next byte), carrying the Damerau–
 * Levenshtein (optimal string alignment) row of the prefix against the query word. A branch is left
 * as soon as every entry of its row exceeds the budget, so the walk visits the few prefixes within
 * the budget of the word's own prefixes, not the dictionary.
 *
 * Typos are counted as Meilisearch counts them: a different first letter counts two. Distances are
 * over UTF-8 bytes (the terms are accent-folded, so nearly every letter is one byte).
 */
import { textLength, textStart, type SortedTexts } from './sorted-texts.ts';

export interface TypoMatch {
  /** The term's position in the dictionary. */
  readonly term: number;
  readonly typos: number;
}

/** Prefixes visited between two deadline checks. */
const CHECK_EVERY = 1024;

interface Walk {
  readonly terms: SortedTexts;
  readonly word: Buffer;
  readonly budget: number;
  readonly found: TypoMatch[];
  readonly checkDeadline: () => void;
  visited: number;
}

/** The byte at `depth` of entry i (every entry of a child range is longer than `depth`). */
const byteAt = (terms: SortedTexts, i: number, depth: number) => terms.bytes[textStart(terms, i) + depth]!;

/** The end of the run of entries in `[from, to)` whose byte at `depth` is `byte` (they are sorted). */
function runEnd(terms: SortedTexts, from: number, to: number, depth: number, byte: number): number {
  let low = from;
  let high = to;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (byteAt(terms, middle, depth) <= byte) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** The row of `prefix ‖ byte` from the prefix's row (`row`) and its parent's (`above`, for a transposition). */
function nextRow(word: Buffer, row: Int32Array, above: Int32Array | undefined, previous: number, byte: number, depth: number): Int32Array {
  const next = new Int32Array(row.length);
  next[0] = depth + 1;
  for (let j = 1; j < row.length; j++) {
    const cost = word[j - 1] === byte ? 0 : 1;
    let best = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + cost);
    if (above && j > 1 && word[j - 1] === previous && word[j - 2] === byte) best = Math.min(best, above[j - 2]! + 1);
    next[j] = best;
  }
  return next;
}

const minOf = (row: Int32Array) => row.reduce((a, b) => Math.min(a, b), Number.MAX_SAFE_INTEGER);

/** Visits the entries `[from, to)`, which share a prefix of `depth` bytes whose row is `row`. */
function visit(walk: Walk, from: number, to: number, depth: number, row: Int32Array, above: Int32Array | undefined, previous: number, penalty: number): void {
  if (++walk.visited % CHECK_EVERY === 0) walk.checkDeadline();
  const { terms, word, budget } = walk;
  let i = from;
  // The prefix itself is a term: it sorts first in its range.
  if (textLength(terms, i) === depth) {
    const typos = row[word.length]! + penalty;
    if (typos > 0 && typos <= budget) walk.found.push({ term: i, typos });
    i++;
  }
  while (i < to) {
    const byte = byteAt(terms, i, depth);
    const end = runEnd(terms, i, to, depth, byte);
    const childPenalty = depth === 0 ? (byte === word[0] ? 0 : 1) : penalty;
    const child = nextRow(word, row, above, previous, byte, depth);
    if (minOf(child) + childPenalty <= budget) visit(walk, i, end, depth + 1, child, row, byte, childPenalty);
    i = end;
  }
}

/** The terms within `budget` typos of `word` (the word itself excluded), and how many prefixes the walk visited. */
export function typoWalk(terms: SortedTexts, word: string, budget: number, checkDeadline: () => void): { found: TypoMatch[]; visited: number } {
  if (budget <= 0 || terms.ends.length === 0) return { found: [], visited: 0 };
  const bytes = Buffer.from(word, 'utf8');
  const root = Int32Array.from({ length: bytes.length + 1 }, (_, j) => j);
  const walk: Walk = { terms, word: bytes, budget, found: [], checkDeadline, visited: 0 };
  visit(walk, 0, terms.ends.length, 0, root, undefined, -1, 0);
  return { found: walk.found, visited: walk.visited };
}

/** The terms within `budget` typos of `word` (the word itself excluded), each with its typo count. */
export function typoMatches(terms: SortedTexts, word: string, budget: number, checkDeadline: () => void): TypoMatch[] {
  return typoWalk(terms, word, budget, checkDeadline).found;
}

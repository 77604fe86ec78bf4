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
import { textLength, textStart, type SortedTexts } from '../index/sorted-texts.ts';

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
  /** `rows[d]`: the distance row of the current prefix of d bytes (the walk is depth first, so one per depth). */
  readonly rows: Int32Array[];
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

/**
 * Fills `rows[depth + 1]`, the row of `prefix ‖ byte`, from the prefix's row and its parent's (for a
 * transposition); `previous` is the prefix's last byte. Returns the row's smallest entry.
 */
function nextRow(walk: Walk, depth: number, previous: number, byte: number): number {
  const { word, rows } = walk;
  const row = rows[depth]!;
  const above = depth > 0 ? rows[depth - 1]! : undefined;
  const next = rows[depth + 1]!;
  next[0] = depth + 1;
  let least = next[0];
  for (let j = 1; j < row.length; j++) {
    const cost = word[j - 1] === byte ? 0 : 1;
    let best = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + cost);
    if (above && j > 1 && word[j - 1] === previous && word[j - 2] === byte) best = Math.min(best, above[j - 2]! + 1);
    next[j] = best;
    if (best < least) least = best;
  }
  return least;
}

/** Visits the entries `[from, to)`, which share a prefix of `depth` bytes whose row is `rows[depth]`. */
function visit(walk: Walk, from: number, to: number, depth: number, previous: number, penalty: number): void {
  if (++walk.visited % CHECK_EVERY === 0) walk.checkDeadline();
  const { terms, word, budget, rows } = walk;
  let i = from;
  // The prefix itself is a term: it sorts first in its range.
  if (textLength(terms, i) === depth) {
    const typos = rows[depth]![word.length]! + penalty;
    if (typos > 0 && typos <= budget) walk.found.push({ term: i, typos });
    i++;
  }
  // A longer prefix is more than the budget away: its row's entries are at least depth − length.
  if (depth + 1 >= rows.length) return;
  while (i < to) {
    const byte = byteAt(terms, i, depth);
    const end = runEnd(terms, i, to, depth, byte);
    const childPenalty = depth === 0 ? (byte === word[0] ? 0 : 1) : penalty;
    if (nextRow(walk, depth, previous, byte) + childPenalty <= budget) visit(walk, i, end, depth + 1, byte, childPenalty);
    i = end;
  }
}

/** The terms within `budget` typos of `word` (the word itself excluded), and how many prefixes the walk visited. */
export function typoWalk(terms: SortedTexts, word: string, budget: number, checkDeadline: () => void): { found: TypoMatch[]; visited: number } {
  if (budget <= 0 || terms.ends.length === 0) return { found: [], visited: 0 };
  const bytes = Buffer.from(word, 'utf8');
  const rows = Array.from({ length: bytes.length + budget + 1 }, () => new Int32Array(bytes.length + 1));
  rows[0]!.forEach((_, j) => (rows[0]![j] = j));
  const walk: Walk = { terms, word: bytes, budget, found: [], checkDeadline, rows, visited: 0 };
  visit(walk, 0, terms.ends.length, 0, -1, 0);
  return { found: walk.found, visited: walk.visited };
}

/** The terms within `budget` typos of `word` (the word itself excluded), each with its typo count. */
export function typoMatches(terms: SortedTexts, word: string, budget: number, checkDeadline: () => void): TypoMatch[] {
  return typoWalk(terms, word, budget, checkDeadline).found;
}

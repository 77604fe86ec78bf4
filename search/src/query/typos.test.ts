/**
 * Typo candidates from a sorted dictionary (`typos.ts`): Damerau–Levenshtein distance (a letter
 * dropped, added, wrong, or two swapped), a different first letter counting two, within the budget
 * only; and the walk visits a small part of a large dictionary, not every term.
 */
import { describe, expect, it } from '@jest/globals';
import { SortedTextsBuilder, textAt, type SortedTexts } from '../index/sorted-texts.ts';
import { typoBudget } from './terms.ts';
import { typoMatches, typoWalk } from './typos.ts';

function dictionary(words: readonly string[]): SortedTexts {
  const sorted = [...new Set(words)].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const builder = new SortedTextsBuilder(sorted.length, sorted.join('').length);
  for (const word of sorted) builder.append(word);
  return builder.finish();
}

const none = () => undefined;

function matches(terms: SortedTexts, word: string, budget: number): Record<string, number> {
  return Object.fromEntries(typoMatches(terms, word, budget, none).map((m) => [textAt(terms, m.term), m.typos]));
}

describe('typo candidates', () => {
  const terms = dictionary(['garden', 'warden', 'gardens', 'gardener', 'hardens', 'grade', 'prejudice', 'prejudices', 'frankenstein', 'franklin', 'garen']);

  it('counts a dropped, added, wrong or swapped letter as one typo, and the word itself not at all', () => {
    expect(matches(terms, 'garedn', 1)).toEqual({ garden: 1, garen: 1 });
    expect(matches(terms, 'gardn', 1)).toEqual({ garden: 1, garen: 1 });
    expect(matches(terms, 'gardenn', 1)).toEqual({ garden: 1, gardens: 1 });
    expect(matches(terms, 'garden', 1)).toEqual({ gardens: 1, garen: 1 });
    expect(matches(terms, 'prejudise', 2)).toEqual({ prejudice: 1, prejudices: 2 });
  });

  it('counts a different first letter as two typos', () => {
    expect(matches(terms, 'harden', 1)).toEqual({ hardens: 1 });
    expect(matches(terms, 'harden', 2)).toEqual({ garden: 2, warden: 2, hardens: 1 });
    expect(matches(terms, 'rfankenstein', 2)).toEqual({ frankenstein: 2 });
  });

  it("allows Meilisearch's budget: none below 5 characters or with a digit, 1 from 5, 2 from 9", () => {
    expect([typoBudget('wars'), typoBudget('garden'), typoBudget('prejudice'), typoBudget('1706'), typoBudget('brk2024b')]).toEqual([0, 1, 2, 0, 0]);
  });

  it('visits a small part of a large dictionary', () => {
    const words = Array.from({ length: 200_000 }, (_, i) => `w${(i * 7919).toString(36)}x${i.toString(36)}`);
    const large = dictionary([...words, 'strawberry', 'strawberries']);
    const { found, visited } = typoWalk(large, 'strawbery', 2, none);
    expect(found.map((m) => textAt(large, m.term))).toEqual(['strawberry']);
    expect(visited).toBeLessThan(large.ends.length / 100);
  });
});

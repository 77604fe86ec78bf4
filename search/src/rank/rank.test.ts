/**
 * The ranking rules on a hand-built index: only the last word typed matches as a prefix, and a
 * word in a primary field (the food's head) ranks a document above one matching only elsewhere.
 */
import { describe, expect, it } from '@jest/globals';
import { SortedTextsBuilder, type SortedTexts } from '../index/sorted-texts.ts';
import type { SourceIndex } from '../index/source-index.ts';
import { withPostingExtras } from '../index/posting-extras.ts';
import { compareUtf8, stemOf } from '../vocabulary/stems.ts';
import { parseQuery } from '../query/terms.ts';
import { rankDocuments } from './rank.ts';

function texts(entries: readonly string[]): SortedTexts {
  const builder = new SortedTextsBuilder(entries.length, 64);
  for (const entry of entries) builder.append(entry);
  return builder.finish();
}

/** An index over documents given as [primary words, other words], documents numbered from 1. */
function indexOf(documents: readonly (readonly [string, string])[]): SourceIndex {
  const postings = new Map<string, { doc: number; primary: number }[]>();
  documents.forEach(([primary, other], i) => {
    const seen = new Map<string, number>();
    for (const word of primary.split(' ').filter(Boolean)) seen.set(word, 1);
    for (const word of other.split(' ').filter(Boolean)) if (!seen.has(word)) seen.set(word, 0);
    for (const [word, flag] of seen) postings.set(word, [...(postings.get(word) ?? []), { doc: i + 1, primary: flag }]);
  });
  const terms = [...postings.keys()].sort(compareUtf8);
  const all = terms.flatMap((t) => postings.get(t)!);
  let end = 0;
  const stems = [...new Set(terms.map(stemOf))].sort(compareUtf8);
  const stemTerms = stems.flatMap((s) => terms.flatMap((t, i) => (stemOf(t) === s ? [i] : [])));
  let stemEnd = 0;
  return withPostingExtras({
    documents: documents.length, terms: texts(terms),
    postingEnds: Uint32Array.from(terms, (t) => (end += postings.get(t)!.length)),
    postingDocs: Int32Array.from(all, (p) => p.doc), postingTf: Float32Array.from(all, () => 1), postingPrimary: Uint8Array.from(all, (p) => p.primary),
    norms: new Float64Array(documents.length + 1).fill(1.2), idTerms: new Uint8Array(terms.length),
    stems: texts(stems), stemEnds: Uint32Array.from(stems, (s) => (stemEnd += terms.filter((t) => stemOf(t) === s).length)), stemTerms: Int32Array.from(stemTerms),
    titles: texts([]), titleDocs: new Int32Array(0),
  });
}

const rank = (index: SourceIndex, keywords: string) => rankDocuments(index, parseQuery(keywords), 10, () => undefined);

describe('the ranking rules', () => {
  const books = indexOf([['the warden', 'peace'], ['war and peace', '']]);

  it('matches only the last word typed as a prefix', () => {
    expect(rank(books, 'war peace')).toMatchObject({ total: 1, docs: [{ doc: 2 }] });
    expect(rank(books, 'peace war').total).toBe(2);
    expect(rank(books, 'warde').docs.map((d) => d.doc)).toEqual([1]);
  });

  it('ranks a document with the words in its primary field (the food itself) above one with them elsewhere', () => {
    const foods = indexOf([['puddings', 'chocolate dry mix prepared with 2 milk'], ['milk', 'reduced fat fluid 2 milkfat']]);
    expect(rank(foods, '2% milk').docs.map((d) => d.doc)).toEqual([2, 1]);
  });
});

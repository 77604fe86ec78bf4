/**
 * The fast ranking (`rankDocuments`, and `rankDocumentsPaged`, which takes the windows of
 * `page.ts` for every reading however small: rule buckets in order, windows that cannot enter the
 * page skipped, the total counted without scoring) returns the same page and total as the exhaustive one
 * (`rankDocumentsExhaustive`: every match scored), under the lookups' FORGIVING rules, on an export
 * the real exporter built from generated inputs at scale 0.1 (real-sized posting lists): for every
 * judged query of `relevance.judgments.ts` and 1,000 seeded ones (the shapes of `random-queries.ts`,
 * some mistyped, at random page sizes). Both paths sum the same terms in the same order, so the
 * pages must be equal to the last bit.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { STORED_SOURCES } from '@uda/shared/runner-contract';
import { rankDocuments, rankDocumentsExhaustive, rankDocumentsPaged } from '@uda/search/rank';
import { parseQuery } from '@uda/search/query';
import { readIndexFile, textAt, textCount, type SourceFiles, type StoredLookupSource } from '@uda/search/index';
import { JUDGEMENTS } from './relevance.judgments.ts';
import { seeded } from '../../test/seeded.ts';
import { mistyped, randomQuery } from '../../test/random-queries.ts';
import { scaledExport, type ScaledExport } from '../../test/scaled-export.ts';

const SCALE = 0.1;
const SEEDED_QUERIES = 1000;
const BUILD_MS = 30 * 60_000;

let built: ScaledExport;
let sources: Map<StoredLookupSource, SourceFiles>;

beforeAll(async () => {
  built = await scaledExport(SCALE);
  sources = (await readIndexFile(built.indexPath))!;
}, BUILD_MS);

afterAll(async () => {
  await built?.remove();
});

const never = () => undefined;

/** Where the fast ranking differs from the exhaustive one for the lookup (empty when it does not). */
function difference(source: StoredLookupSource, keywords: string, limit: number): string[] {
  const { index } = sources.get(source)!;
  const exhaustive = JSON.stringify(rankDocumentsExhaustive(index, parseQuery(keywords), limit, never));
  return [['fast', rankDocuments], ['paged', rankDocumentsPaged]].flatMap(([name, rank]) => {
    const ranking = JSON.stringify((rank as typeof rankDocuments)(index, parseQuery(keywords), limit, never));
    return ranking === exhaustive ? [] : [`${source} "${keywords}" limit ${limit}: ${name as string} ${ranking}, exhaustive ${exhaustive}`];
  });
}

describe(`the fast ranking returns the exhaustive ranking's page and total at scale ${SCALE}`, () => {
  it('for every judged query', () => {
    const judged = Object.entries(JUDGEMENTS).flatMap(([source, { queries }]) => queries.map((q) => [source as StoredLookupSource, q.keywords] as const));
    expect(judged.length).toBeGreaterThan(100);
    expect(judged.flatMap(([source, keywords]) => difference(source, keywords, 10))).toEqual([]);
  });

  it(`for ${SEEDED_QUERIES} seeded queries over every source`, () => {
    const random = seeded(32);
    const failures: string[] = [];
    let matched = 0;
    for (let q = 0; q < SEEDED_QUERIES; q++) {
      const source = STORED_SOURCES[q % STORED_SOURCES.length]!;
      const { index } = sources.get(source)!;
      const titles = Array.from({ length: 200 }, () => textAt(index.titles, Math.floor(random() * textCount(index.titles))));
      const typed = randomQuery(index, titles, random);
      const keywords = random() < 0.3 ? mistyped(typed, random) : typed;
      const limit = 1 + Math.floor(random() * 50);
      failures.push(...difference(source, keywords, limit));
      if (rankDocuments(index, parseQuery(keywords), limit, never).total > 0) matched++;
    }
    expect(failures).toEqual([]);
    // The seeded queries must exercise matches, not only misses.
    expect(matched).toBeGreaterThan(SEEDED_QUERIES / 2);
  });
});

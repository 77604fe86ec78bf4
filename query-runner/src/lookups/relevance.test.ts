/**
 * Relevance of the stored-source lookups, measured: the mean reciprocal rank (MRR) of the first
 * relevant row in the top 10 over the judged queries of `relevance.judgments.ts`, per source, on a
 * database the real exporter built from the sample data. Each source's floor is its first measured
 * MRR with the BM25 index, rounded down, so a ranking change that makes answers worse fails here.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startExportedRunner, type ExportedRunner } from '../../test/exported-runner.ts';
import { JUDGEMENTS, type JudgedSource } from './relevance.judgments.ts';

const FLOORS: Record<keyof typeof JUDGEMENTS, number> = {
  gutenberg: 0.95,
  census: 0.95,
  food: 0.95,
  pwc: 0.95,
  sec: 0.95,
};

const TOP = 10;
let served: ExportedRunner;
const measured: string[] = [];

beforeAll(async () => {
  served = await startExportedRunner('relevance');
});

afterAll(async () => {
  await served.stop();
  process.stdout.write(`lookup relevance (MRR@${TOP}): ${measured.join(', ')}\n`);
});

/** The reciprocal rank of each judged query: 1 / the position of the first relevant row, or 0. */
async function reciprocalRanks(source: string, judged: JudgedSource): Promise<{ keywords: string; rr: number }[]> {
  const ranks = [];
  for (const { keywords, relevant } of judged.queries) {
    const { results } = await served.ok(source, keywords, TOP);
    const position = results.findIndex((row) => relevant.includes(row[judged.key] as string | number));
    ranks.push({ keywords, rr: position < 0 ? 0 : 1 / (position + 1) });
  }
  return ranks;
}

describe('lookup relevance: MRR of the judged queries, per stored source', () => {
  for (const [source, judged] of Object.entries(JUDGEMENTS) as [keyof typeof JUDGEMENTS, JudgedSource][]) {
    it(`${source}: ${judged.queries.length} judged queries, MRR at least ${FLOORS[source]}`, async () => {
      expect(judged.queries.length).toBeGreaterThanOrEqual(10);
      const ranks = await reciprocalRanks(source, judged);
      const mrr = ranks.reduce((sum, r) => sum + r.rr, 0) / ranks.length;
      measured.push(`${source} ${mrr.toFixed(3)}`);
      const misses = ranks.filter((r) => r.rr < 1);
      process.stdout.write(`${source}: MRR ${mrr.toFixed(3)}; below rank 1: ${JSON.stringify(misses)}\n`);
      // Below the floor, the failure lists the queries whose first relevant row is not first.
      expect(mrr >= FLOORS[source] ? [] : misses).toEqual([]);
    });
  }
});

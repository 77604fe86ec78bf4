/**
 * Relevance of the stored-source lookups, measured: the mean reciprocal rank (MRR) of the first
 * relevant row in the top 10 over the judged queries of `relevance.judgments.ts`, per source and
 * per kind of query (exact spelling, plurals, typos, spaces, punctuation, partial names,
 * abbreviations, extra words), on a database the real exporter built from the sample data.
 *
 * It fails when a source's MRR is below 0.95, when a query's first relevant row is not in the top
 * 3, or when the exactly spelled queries are not all answered first (MRR 1.000).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startExportedRunner, type ExportedRunner } from '../../test/exported-runner.ts';
import { JUDGEMENTS, type JudgedSource, type QueryKind } from './relevance.judgments.ts';

const FLOOR = 0.95;
const TOP = 10;
/** The first relevant row must be within this rank. */
const WITHIN = 3;

interface Ranked {
  readonly source: string;
  readonly keywords: string;
  readonly kind: QueryKind;
  readonly rr: number;
}

let served: ExportedRunner;
const measured: Ranked[] = [];

beforeAll(async () => {
  served = await startExportedRunner('relevance');
});

const mrr = (ranks: readonly Ranked[]) => ranks.reduce((sum, r) => sum + r.rr, 0) / Math.max(1, ranks.length);

afterAll(async () => {
  await served.stop();
  const kinds = [...new Set(measured.map((r) => r.kind))];
  const bySource = [...new Set(measured.map((r) => r.source))].map((source) => `${source} ${mrr(measured.filter((r) => r.source === source)).toFixed(3)}`);
  const byKind = kinds.map((kind) => {
    const ranks = measured.filter((r) => r.kind === kind);
    return `${kind} ${mrr(ranks).toFixed(3)} (${ranks.length})`;
  });
  process.stdout.write(`lookup relevance (MRR@${TOP}), ${measured.length} queries, all ${mrr(measured).toFixed(3)}\n  per source: ${bySource.join(', ')}\n  per kind: ${byKind.join(', ')}\n`);
});

/** The reciprocal rank of each judged query: 1 / the position of the first relevant row, or 0. */
async function reciprocalRanks(source: string, judged: JudgedSource): Promise<Ranked[]> {
  const ranks: Ranked[] = [];
  for (const { keywords, relevant, kind = 'exact' } of judged.queries) {
    const { results } = await served.ok(source, keywords, TOP);
    const position = results.findIndex((row) => relevant.includes(row[judged.key] as string | number));
    ranks.push({ source, keywords, kind, rr: position < 0 ? 0 : 1 / (position + 1) });
  }
  return ranks;
}

describe('lookup relevance: MRR of the judged queries, per stored source', () => {
  for (const [source, judged] of Object.entries(JUDGEMENTS) as [keyof typeof JUDGEMENTS, JudgedSource][]) {
    it(`${source}: ${judged.queries.length} judged queries, MRR at least ${FLOOR}, every answer in the top ${WITHIN}, exact spellings first`, async () => {
      expect(judged.queries.length).toBeGreaterThanOrEqual(10);
      const ranks = await reciprocalRanks(source, judged);
      measured.push(...ranks);
      const misses = ranks.filter((r) => r.rr < 1);
      process.stdout.write(`${source}: MRR ${mrr(ranks).toFixed(3)}; below rank 1: ${JSON.stringify(misses)}\n`);
      // Each failure lists the queries at fault.
      expect(ranks.filter((r) => r.rr < 1 / WITHIN)).toEqual([]);
      expect(ranks.filter((r) => r.kind === 'exact' && r.rr < 1)).toEqual([]);
      expect(mrr(ranks) >= FLOOR ? [] : misses).toEqual([]);
    });
  }
});

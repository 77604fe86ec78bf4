/**
 * The in-memory ranking (`rank.ts`) and the SQL reference (`test/bm25-sql.ts`) rank random queries
 * the same, on a database the real exporter built from the sample data: the same total, tiers and
 * documents in the same order. The memory ranking runs with AS_TYPED rules (no stems, typos, splits
 * or dropped words: the forms as typed and their prefixes), which the reference states; the
 * forgiving rules are tested by outcome (`lookups.forgiving.test.ts` in the API, the relevance set).
 * The runner compares titles stem by stem, so the reference reads the titles stemmed the same way
 * (a table this test writes with the runner's stemmer) and the phrase stemmed. Scores may differ in the last bits (the two sum the terms in a
 * different order, and DuckDB's parallel sum in no fixed order), so two documents may swap only
 * where their scores are equal to 1e-9, including across the end of the page: the reference reads
 * a few rows past it to find the document the memory ranking put there.
 *
 * The queries are seeded, so a failure repeats: words and prefixes of the index's own terms (one
 * or two letters match whole terms only), leading words of titles (the exact and prefix tiers),
 * letter case and accents, and words no document has.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { STORED_SOURCES } from '@uda/shared/runner-contract';
import { referenceRankingSql } from '../../test/bm25-sql.ts';
import { startExportedRunner, type ExportedRunner } from '../../test/exported-runner.ts';
import { rankDocuments, type RankedDoc } from '@uda/search/rank';
import { AS_TYPED, parseQuery, titlePhrase } from '@uda/search/query';
import { searchTable, type SourceIndex } from '@uda/search/index';
import { stemPhrase } from '@uda/search/vocabulary';
import { searchIndexesOf } from './search-index.ts';
import { seeded } from '../../test/seeded.ts';
import { randomQuery } from '../../test/random-queries.ts';

const QUERIES_PER_SOURCE = 150;
const NEAR = 1e-9;
/** Rows the reference reads past the page, where a tied document may have landed. */
const PAST_PAGE = 10;

let served: ExportedRunner;
let connection: DuckDBConnection;
let release: () => void;
let indexOf: (source: string) => SourceIndex;

beforeAll(async () => {
  served = await startExportedRunner('rank-agrees');
  const lease = served.runner.databases.lease()!;
  release = lease.release;
  connection = await lease.database.instance.connect();
  indexOf = (source) => searchIndexesOf(lease.database)!.get(source as never)!;
  for (const source of STORED_SOURCES) await writeStemmedTitles(source);
});

/** The exporter's titles (terms as written), which the random queries start from. */
const titlesOf = new Map<string, string[]>();
const stemmedTitles = (source: string) => `stemmed_titles_${source}`;

/** The exporter's titles with each term stemmed, as the runner holds them in memory. */
async function writeStemmedTitles(source: string): Promise<void> {
  await connection.run(`CREATE TEMP TABLE ${stemmedTitles(source)} (title VARCHAR, doc INTEGER)`);
  const rows = (await connection.runAndReadAll(`SELECT title, doc FROM ${searchTable(source, 'titles')}`)).getRows();
  titlesOf.set(source, rows.map(([title]) => String(title)));
  const appender = await connection.createAppender(stemmedTitles(source), 'main', 'temp');
  const cache = new Map<string, string>();
  for (const [title, doc] of rows) {
    appender.appendVarchar(stemPhrase(String(title), cache));
    appender.appendInteger(Number(doc));
    appender.endRow();
  }
  appender.closeSync();
}

afterAll(async () => {
  connection.closeSync();
  release();
  await served.stop();
});

async function reference(source: string, keywords: string, limit: number): Promise<{ total: number; docs: RankedDoc[] }> {
  const query = referenceRankingSql(source, keywords, limit, stemmedTitles(source), stemPhrase(titlePhrase(keywords), new Map()))!;
  const reader = await connection.runAndReadAll(query.sql, query.params);
  const rows = reader.getRowObjectsJS() as { doc: number; tier: number; outside: number; score: number; total: bigint }[];
  return { total: Number(rows[0]?.total ?? 0), docs: rows.map(({ doc, tier, outside, score }) => ({ doc, typos: 0, tier, outside, stems: 0, score })) };
}

/**
 * Where the memory page differs from the reference's first `memory.length` rows beyond a swap of
 * near-equal scores (empty when they agree); `sql` holds the rows past the page too.
 */
function disagreements(memory: readonly RankedDoc[], sql: readonly RankedDoc[], limit: number): string[] {
  const page = sql.slice(0, limit);
  if (memory.length !== page.length) return [`${memory.length} documents in memory, ${page.length} in SQL`];
  const near = (a: number, b: number) => Math.abs(a - b) <= NEAR * Math.max(1, Math.abs(b));
  return memory.flatMap((m, i) => {
    const s = page[i]!;
    const same = (o: RankedDoc) => o.tier === m.tier && o.outside === m.outside && near(o.score, m.score);
    if (same(s) && (m.doc === s.doc || sql.some((o) => o.doc === m.doc && same(o)))) return [];
    return [`#${i}: memory ${JSON.stringify(m)}, SQL ${JSON.stringify(s)}`];
  });
}

describe('the in-memory ranking agrees with the SQL reference', () => {
  for (const [n, source] of STORED_SOURCES.entries()) {
    it(`${source}: ${QUERIES_PER_SOURCE} random queries rank the same, with the same total`, async () => {
      const index = indexOf(source);
      const random = seeded(17 + n);
      const failures: string[] = [];
      let matched = 0;
      for (let q = 0; q < QUERIES_PER_SOURCE; q++) {
        const keywords = randomQuery(index, titlesOf.get(source)!, random);
        const limit = 1 + Math.floor(random() * 50);
        const memory = rankDocuments(index, parseQuery(keywords), limit, () => undefined, AS_TYPED);
        const sql = await reference(source, keywords, limit + PAST_PAGE);
        if (memory.total > 0) matched++;
        const differences = memory.total === sql.total ? disagreements(memory.docs, sql.docs, limit) : [`total ${memory.total} in memory, ${sql.total} in SQL`];
        if (differences.length > 0) failures.push(`"${keywords}" limit ${limit}: ${differences.join('; ')}`);
      }
      expect(failures).toEqual([]);
      // The random queries must exercise matches, not only misses.
      expect(matched).toBeGreaterThan(QUERIES_PER_SOURCE / 3);
    });
  }
});

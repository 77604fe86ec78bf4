/**
 * `node query-runner/bench/lookup-plan.ts SERVICE_DB SOURCE KEYWORDS...`: DuckDB's EXPLAIN ANALYZE
 * of a stored lookup on a built `service.db`, as the runner used to run it per lookup: the ranking
 * as one SQL query (the reference, `test/bm25-sql.ts`), then the page SQL for the documents the
 * in-memory ranking chose. Shows where that DuckDB time went (the runner now ranks in memory and
 * reads pages from its page store).
 */
import { DuckDBInstance, INTEGER, LIST, listValue } from '@duckdb/node-api';
import { referenceRankingSql } from '../test/bm25-sql.ts';
import { rankDocuments } from '@uda/search/rank';
import { parseQuery } from '@uda/search/query';
import { indexBytes, loadSourceIndex, pageSql, type StoredLookupSource } from '@uda/search/index';

const [path, source, ...words] = process.argv.slice(2) as [string, StoredLookupSource, ...string[]];
if (!path || !source || words.length === 0) throw new Error('usage: node query-runner/bench/lookup-plan.ts SERVICE_DB SOURCE KEYWORDS...');
const keywords = words.join(' ');
const instance = await DuckDBInstance.create(path, { access_mode: 'READ_ONLY', threads: process.env.DUCKDB_THREADS ?? '1' });
const connection = await instance.connect();

const reference = referenceRankingSql(source, keywords, 10)!;
interface PlanNode {
  operator_name?: string;
  operator_timing?: number;
  operator_cardinality?: number;
  latency?: number;
  children?: PlanNode[];
  extra_info?: Record<string, unknown>;
}

/** One line per operator, indented by depth: its own time and the rows it produced. */
function printNode(node: PlanNode, depth: number): void {
  const what = node.extra_info?.Table ?? node.extra_info?.Aggregates ?? '';
  console.log(`${'  '.repeat(depth)}${node.operator_name?.trim()}  ${((node.operator_timing ?? 0) * 1000).toFixed(2)} ms  ${node.operator_cardinality} rows  ${String(what).slice(0, 60)}`);
  for (const child of node.children ?? []) printNode(child, depth + 1);
}

const plan = async (sql: string, values: Parameters<typeof connection.runAndReadAll>[1], types?: Parameters<typeof connection.runAndReadAll>[2]) => {
  await connection.runAndReadAll(sql, values, types); // warms the file's pages: the plan shows a warm run
  const reader = await connection.runAndReadAll(`EXPLAIN (ANALYZE, FORMAT json) ${sql}`, values, types);
  const root = JSON.parse(String(reader.getRows()[0]![1])) as PlanNode;
  console.log(`total ${((root.latency ?? 0) * 1000).toFixed(2)} ms`);
  for (const child of root.children ?? []) printNode(child, 1);
};
console.log(`# Ranking in SQL (the reference): ${source} "${keywords}"`);
await plan(reference.sql, reference.params);

const loadStarted = performance.now();
const index = (await loadSourceIndex(connection, source))!;
console.log(`# In-memory index of ${source} loaded in ${((performance.now() - loadStarted) / 1000).toFixed(1)} s: ${(indexBytes(index) / 1e6).toFixed(0)} MB`);
const rankStarted = process.cpuUsage();
const ranking = rankDocuments(index, parseQuery(keywords), 10, () => undefined);
const rankCpu = process.cpuUsage(rankStarted);
console.log(`ranking in memory: ${((rankCpu.user + rankCpu.system) / 1000).toFixed(2)} ms CPU (first run, cold JIT)`);
const docs = ranking.docs.map((d) => d.doc);
console.log(`# Page query for the in-memory ranking's ${docs.length} documents (total ${ranking.total})`);
await plan(`WITH ranked AS (SELECT unnest($1::INTEGER[]) AS doc) ${pageSql(source)}`, [listValue(docs)], [LIST(INTEGER)]);
console.log(`Command: node query-runner/bench/lookup-plan.ts ${path} ${source} ${keywords}   (DUCKDB_THREADS, default 1)`);
connection.closeSync();
instance.closeSync();

/**
 * Rebuilds the search index and runner files of an existing service.db (its `_search_*` tables
 * dropped first), one source at a time, printing each stage's wall and CPU seconds and a fingerprint
 * of every output: a quick check that a change to the index build keeps its output byte for byte.
 *
 *   node exporter/bench/index-stage.ts <service.db copy> <out dir> [source…]
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { buildSearchIndex, openSearchFiles, SEARCH_SPECS, searchTable } from '@uda/search/index';

const [dbPath, outDir, ...only] = process.argv.slice(2);
const cpu = () => { const u = process.resourceUsage(); return (u.userCPUTime + u.systemCPUTime) / 1e6; };
const instance = await DuckDBInstance.create(dbPath!, { memory_limit: process.env.MEM ?? '600MB', threads: '2' });
const connection = await instance.connect();
if (outDir === '--fingerprint') {
  for (const spec of SEARCH_SPECS) await fingerprint(spec.source);
  process.exit(0);
}
const existing = (await connection.runAndReadAll(`SELECT table_name FROM duckdb_tables() WHERE table_name LIKE '\\_search\\_%' ESCAPE '\\'`)).getRows().map((r) => r[0] as string);
for (const table of existing) await connection.run(`DROP TABLE "${table}"`);
const files = await openSearchFiles(outDir!);
for (const spec of SEARCH_SPECS.filter((s) => only.length === 0 || only.includes(s.source))) {
  let [wall, cpu0] = [performance.now(), cpu()];
  const built = await buildSearchIndex(connection, spec, { scratchDir: outDir });
  console.log(`search index ${spec.source}: ${((performance.now() - wall) / 1000).toFixed(1)} s, ${(cpu() - cpu0).toFixed(1)} cpu s, rss ${Math.round(process.resourceUsage().maxRSS / 1024)} MB`);
  [wall, cpu0] = [performance.now(), cpu()];
  await files.addSource(connection, spec.source, built);
  console.log(`runner files ${spec.source}: ${((performance.now() - wall) / 1000).toFixed(1)} s, ${(cpu() - cpu0).toFixed(1)} cpu s, rss ${Math.round(process.resourceUsage().maxRSS / 1024)} MB`);
  await fingerprint(spec.source);
}
for (const name of await files.finish()) console.log(`  ${name}: md5 ${createHash('md5').update(await readFile(join(outDir!, name))).digest('hex')}`);
console.log(`total cpu ${cpu().toFixed(1)} s, peak rss ${Math.round(process.resourceUsage().maxRSS / 1024)} MB`);
connection.closeSync();
instance.closeSync();

async function fingerprint(source: string): Promise<void> {
  for (const kind of ['docs', 'postings', 'titles', 'stats', 'idterms'] as const) {
    const table = searchTable(source, kind);
    const reader = await connection.runAndReadAll(`SELECT count(*)::BIGINT, bit_xor(hash(t))::VARCHAR FROM (SELECT rowid AS row_id, * FROM "${table}") t`);
    const cols = (await connection.runAndReadAll(`SELECT string_agg(column_name || ' ' || data_type, ', ' ORDER BY column_index) FROM duckdb_columns() WHERE table_name = '${table}'`)).getRows()[0]![0];
    console.log(`  ${table}: ${String(reader.getRows()[0]![0])} rows, fingerprint ${String(reader.getRows()[0]![1])} (${String(cols)})`);
  }
}

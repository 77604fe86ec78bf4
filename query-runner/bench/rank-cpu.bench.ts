/**
 * `node query-runner/bench/rank-cpu.bench.ts SEARCH_INDEX_BIN`: the CPU of the ranking alone, per
 * query of `lookup-cpu.bench.ts`'s mix, fast (`rankDocuments`) against exhaustive
 * (`rankDocumentsExhaustive`: every match scored), in one run so the ratio holds on a loaded
 * machine. Reads the exporter's `search-index.bin` (seconds, where `lookup-cpu.bench.ts` builds the
 * index from `service.db`). The first run of each query is not timed (it fills the per-word caches
 * both paths share). Env: BENCH_ITERATIONS (default 10).
 */
import { loadavg } from 'node:os';
import { rankDocuments, rankDocumentsExhaustive, type Ranking } from '@uda/search/rank';
import { parseQuery, type ParsedQuery } from '@uda/search/query';
import { readIndexFile, type SourceIndex } from '@uda/search/index';
import { LOOKUP_CPU_QUERIES } from './lookup-cpu.queries.ts';

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 10);
const path = process.argv[2];
if (!path) throw new Error('usage: node query-runner/bench/rank-cpu.bench.ts SEARCH_INDEX_BIN');

const opened = performance.now();
const sources = (await readIndexFile(path))!;
console.log(`Index read (with its block maxima) in ${((performance.now() - opened) / 1000).toFixed(1)} s; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);

type Rank = (index: SourceIndex, query: ParsedQuery, limit: number, checkDeadline: () => void) => Ranking;
function cpuMs(rank: Rank, index: SourceIndex, keywords: string): number {
  const started = process.cpuUsage();
  for (let i = 0; i < ITERATIONS; i++) rank(index, parseQuery(keywords), 10, () => undefined);
  const cpu = process.cpuUsage(started);
  return (cpu.user + cpu.system) / 1000 / ITERATIONS;
}

console.log(`\nRanking CPU per lookup (limit 10), ${ITERATIONS} runs each: ${path}`);
console.log('source     keywords                total   fast ms  exhaustive ms  same');
let [fastSum, slowSum, fastMax] = [0, 0, 0];
for (const [source, keywords] of LOOKUP_CPU_QUERIES) {
  const { index } = sources.get(source)!;
  const fast = rankDocuments(index, parseQuery(keywords), 10, () => undefined);
  const slow = rankDocumentsExhaustive(index, parseQuery(keywords), 10, () => undefined);
  const [f, s] = [cpuMs(rankDocuments, index, keywords), cpuMs(rankDocumentsExhaustive, index, keywords)];
  [fastSum, slowSum, fastMax] = [fastSum + f, slowSum + s, Math.max(fastMax, f)];
  const same = JSON.stringify(fast) === JSON.stringify(slow);
  console.log(`${source.padEnd(10)} ${keywords.padEnd(22)} ${String(fast.total).padStart(6)}  ${f.toFixed(3).padStart(8)}  ${s.toFixed(3).padStart(13)}  ${same ? 'yes' : 'NO'}`);
}
const n = LOOKUP_CPU_QUERIES.length;
console.log(`mean ranking CPU per lookup: fast ${(fastSum / n).toFixed(3)} ms, exhaustive ${(slowSum / n).toFixed(3)} ms (${(slowSum / fastSum).toFixed(1)}×); the costliest fast ${fastMax.toFixed(3)} ms; load average ${loadavg()[0]!.toFixed(1)}`);
console.log(`Command: BENCH_ITERATIONS=${ITERATIONS} npx node query-runner/bench/rank-cpu.bench.ts ${path}`);

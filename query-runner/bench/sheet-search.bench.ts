/**
 * `npm run bench:sheet-search`: connected-sheet search over a 10,000-row sheet through the runner's
 * own route (`POST /v1/sheets/search` on loopback, an in-process runner over a local object store).
 * The sheet is generated from a fixed seed: names, titles, cities (some misspelt), notes, a price,
 * a quantity and a date. The query mix holds exact words, plurals, typos, two-word queries, a
 * number, a date and no-match text; it runs sequentially and at a few concurrencies, printing
 * p50/p90/p99, requests per second and the process CPU per search (steadier than the wall clock on
 * a shared machine). Goal: p50 ≤ 20 ms sequentially. The first pass over the mix is not timed.
 * Env: BENCH_ROWS (default 10000), BENCH_SECONDS per concurrency (default 4), BENCH_CONCURRENCY
 * (default 1,4,16), REDIS_URL (default redis://127.0.0.1:6379, under a private key prefix).
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalFolderStore } from '@uda/shared/object-store';
import { buildFixtureDb, publishDatabase, writeParquet } from '@uda/test-support/runner-fixtures';
import { RUNNER_AUTH, redisPrefix, runnerEnv, startInProcess } from '@uda/test-support/runner-harness';

const ROWS = Number(process.env.BENCH_ROWS ?? 10_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const CONCURRENCIES = (process.env.BENCH_CONCURRENCY ?? '1,4,16').split(',').map(Number);
const KEY = 'sheets/bench/sheet/1.parquet';
/** The API's row cap for a sheet search (`MAX_SEARCH_ROWS`). */
const LIMIT = 1000;

const FIRST = ['Alice', 'Bruno', 'Chiara', 'Dmitri', 'Elena', 'Farah', 'Gustav', 'Hiroshi', 'Ines', 'Jamal', 'Katarina', 'Lucas', 'Marta', 'Nikolai', 'Olivia', 'Pedro'];
const LAST = ['Anderson', 'Bianchi', 'Costa', 'Dubois', 'Eriksen', 'Fischer', 'Garcia', 'Hansen', 'Ivanova', 'Jensen', 'Kowalski', 'Lindqvist', 'Moreau', 'Novak', 'Oliveira', 'Petrov'];
const CITIES = ['Amsterdam', 'Barcelona', 'Copenhagen', 'Dublin', 'Edinburgh', 'Florence', 'Geneva', 'Hamburg', 'Istanbul', 'Lisbon', 'Marseille', 'Naples', 'Oslo', 'Prague', 'Rotterdam', 'Stockholm'];
const NOUNS = ['garden', 'strawberry', 'engine', 'library', 'river', 'mountain', 'kitchen', 'window', 'harbour', 'bicycle', 'lantern', 'orchard', 'station', 'violin', 'meadow', 'teacher'];
const ADJECTIVES = ['quiet', 'broken', 'golden', 'ancient', 'silver', 'hidden', 'frozen', 'painted', 'northern', 'gentle', 'roasted', 'wooden'];

/** mulberry32: the same sheet on every run. */
function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function sheetCsv(rows: number): string {
  const random = seeded(20261127);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const plural = (noun: string) => (noun.endsWith('y') ? `${noun.slice(0, -1)}ies` : `${noun}s`);
  // About one cell in twenty misspelt: a letter dropped, as people type them.
  const typo = (word: string) => (random() < 0.05 ? word.slice(0, 2) + word.slice(3) : word);
  const lines = ['id,name,title,city,notes,price,quantity,joined'];
  for (let i = 1; i <= rows; i++) {
    const title = `The ${pick(ADJECTIVES)} ${random() < 0.3 ? plural(pick(NOUNS)) : pick(NOUNS)}`;
    const notes = `${pick(ADJECTIVES)} ${pick(NOUNS)} near the ${pick(NOUNS)}`;
    const joined = new Date(Date.UTC(2015, 0, 1) + Math.floor(random() * 3650) * 86_400_000).toISOString().slice(0, 10);
    lines.push([i, `${pick(FIRST)} ${typo(pick(LAST))}`, `"${title}"`, typo(pick(CITIES)), `"${notes}"`,
      (random() * 500).toFixed(2), Math.floor(random() * 1000), joined].join(','));
  }
  return `${lines.join('\n')}\n`;
}

const QUERIES = [
  'lisbon', 'strawberries', 'gardens', 'Copenhagen', 'libary', 'mountian', 'Kowalsky',
  'golden river', 'quiet orchards', 'Elena Petrov', '2019-06-15', '123.45', '777', 'zzqxv nothing', 'Hamburgg',
];

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'uda-bench-sheet-search-'));
  const dataDir = join(dir, 'data');
  const store = new LocalFolderStore(join(dataDir, 'objects'));
  await publishDatabase(store, await buildFixtureDb(join(dir, 'service.db'), { books: 10 }));
  await writeFile(join(dir, 'sheet.csv'), sheetCsv(ROWS));
  // As the sheet worker stores an upload: Parquet with the types DuckDB infers from the CSV.
  await store.putFile(KEY, await writeParquet(join(dir, 'sheet.parquet'), `FROM read_csv('${join(dir, 'sheet.csv')}')`));
  const env = await runnerEnv({}, { DATA_DIR: dataDir, REDIS_KEY_PREFIX: redisPrefix('bench-sheet-search'), ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}) });
  const runner = await startInProcess(env);
  try {
    while (!runner.databases.ready) await new Promise((r) => setTimeout(r, 50));
    const search = async (q: string): Promise<unknown[]> => {
      const res = await fetch(`${runner.url}/v1/sheets/search`, {
        method: 'POST', headers: { 'content-type': 'application/json', ...RUNNER_AUTH }, body: JSON.stringify({ key: KEY, q, limit: LIMIT }),
      });
      const body = (await res.json()) as { rows?: unknown[] };
      if (res.status !== 200) throw new Error(`${q}: ${res.status} ${JSON.stringify(body)}`);
      return body.rows!;
    };
    // The answers' digest: a change to the search that keeps it must keep the digest.
    const digest = createHash('sha256');
    const matches: string[] = [];
    for (const q of QUERIES) {
      const rows = await search(q);
      digest.update(JSON.stringify([q, rows]));
      matches.push(`${q} ${rows.length}`);
    }
    process.stdout.write(`sheet: ${ROWS.toLocaleString('en-US')} rows; rows found per query (limit ${LIMIT}): ${matches.join(', ')}\n`);
    process.stdout.write(`answers sha256: ${digest.digest('hex').slice(0, 16)}\n`);
    const rows: string[][] = [];
    for (const concurrency of CONCURRENCIES) rows.push(await measure(concurrency, search));
    printTable(['concurrency', 'searches', 'p50 ms', 'p90 ms', 'p99 ms', 'req/s', 'CPU ms/search', 'load avg'], rows);
  } finally {
    await runner.shutdown(0);
    await rm(dir, { recursive: true, force: true });
  }
  process.stdout.write(`\ncommand: npm run bench:sheet-search (BENCH_ROWS=${ROWS}, BENCH_SECONDS=${SECONDS}, BENCH_CONCURRENCY=${CONCURRENCIES.join(',')})\n`);
}

/** Runs the query mix in turn on `concurrency` callers for SECONDS. */
async function measure(concurrency: number, search: (q: string) => Promise<unknown[]>): Promise<string[]> {
  const times: number[] = [];
  let next = 0;
  const until = performance.now() + SECONDS * 1000;
  const cpu = process.cpuUsage();
  const started = performance.now();
  const caller = async () => {
    while (performance.now() < until) {
      const q = QUERIES[next++ % QUERIES.length]!;
      const start = performance.now();
      await search(q);
      times.push(performance.now() - start);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, caller));
  const elapsed = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  times.sort((a, b) => a - b);
  return [String(concurrency), String(times.length), fmt(percentile(times, 50)), fmt(percentile(times, 90)), fmt(percentile(times, 99)),
    (times.length / elapsed).toFixed(0), fmt((used.user + used.system) / 1000 / times.length), loadavg().map((l) => l.toFixed(1)).join(' ')];
}

const fmt = (ms: number) => ms.toFixed(1);

function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ');
  process.stdout.write(`\n${line(header)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}\n${rows.map(line).join('\n')}\n`);
}

await main();

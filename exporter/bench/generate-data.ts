/**
 * `npm run data:generate -- --scale N [--seed S] [--out DIR]`: full-size inputs for the benchmarks,
 * in the official formats of the samples in `exporter/data/` (same files, headers, quoting,
 * encodings, line endings and quirks), seeded so the figures repeat. Scale 1 is roughly the real
 * dumps: 75,000 Gutenberg books, 2,000,000 foods with 13 nutrient rows each, 300,000 papers, 4,000,000
 * EDGAR index rows. Census is copied as it is (the sample is already every county and state), and so
 * are the live snapshots, the SEC tickers and submissions, and the small lookup files.
 *
 * Every generated file starts with the sample's rows, so the sample's known answers ("the art of
 * war", "TSLA") are there at every scale; the added rows are recombined from the sample's own words,
 * authors, segments and codes, so term frequencies look like the real ones.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { cp, mkdir, readFile, readdir, stat } from 'node:fs/promises';
import { once } from 'node:events';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parse } from 'csv-parse/sync';

const DATA = join(import.meta.dirname, '..', 'data');

/** Rows added at scale 1 (before the sample's own rows). */
export const FULL_SIZE = { books: 75_000, foods: 2_000_000, nutrientsPerFood: 13, papers: 300_000, filings: 4_000_000 } as const;

/** mulberry32: small, fast, and the same sequence for the same seed everywhere. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Rng = () => number;
const pick = <T>(rng: Rng, items: readonly T[]): T => items[Math.floor(rng() * items.length)]!;
const between = (rng: Rng, low: number, high: number) => low + Math.floor(rng() * (high - low + 1));

/** Buffered writes with back-pressure, so a multi-GB file streams in constant memory. */
class Out {
  private chunk = '';
  private readonly stream: WriteStream;
  private readonly encoding: BufferEncoding;
  constructor(path: string, encoding: BufferEncoding = 'utf8') {
    this.stream = createWriteStream(path);
    this.encoding = encoding;
  }
  async write(text: string): Promise<void> {
    this.chunk += text;
    if (this.chunk.length > 1 << 20) {
      const ok = this.stream.write(Buffer.from(this.chunk, this.encoding));
      this.chunk = '';
      if (!ok) await once(this.stream, 'drain');
    }
  }
  async close(): Promise<void> {
    this.stream.end(Buffer.from(this.chunk, this.encoding));
    await once(this.stream, 'finish');
  }
}

/** RFC 4180 minimal quoting, as `pg_catalog.csv` has it. */
const minimal = (field: string) => (/[",\n]/.test(field) ? `"${field.replace(/"/g, '""')}"` : field);
/** Every field quoted, as the FoodData Central CSVs have it. */
const quoted = (fields: readonly (string | number)[]) => `${fields.map((f) => `"${String(f).replace(/"/g, '""')}"`).join(',')}\n`;

const words = (text: string) => text.split(/\s+/).filter(Boolean);
const capitalise = (word: string) => word.charAt(0).toUpperCase() + word.slice(1);
const isoDay = (rng: Rng, from: number, to: number) =>
  `${between(rng, from, to)}-${String(between(rng, 1, 12)).padStart(2, '0')}-${String(between(rng, 1, 28)).padStart(2, '0')}`;
const splitList = (field: string) => (field === '' ? [] : field.split('; '));

async function gutenberg(out: string, rng: Rng, count: number): Promise<number> {
  const file = join(DATA, 'gutenberg/pg_catalog.csv');
  const text = await readFile(file, 'utf8');
  const rows = parse(text, { columns: true }) as Record<string, string>[];
  const titleWords = rows.flatMap((r) => words(r['Title']!.replace(/\n/g, ' ')));
  const authors = rows.flatMap((r) => splitList(r['Authors']!));
  const subjects = rows.flatMap((r) => splitList(r['Subjects']!));
  const shelves = rows.flatMap((r) => splitList(r['Bookshelves']!));
  const some = (items: string[], max: number) => [...new Set(Array.from({ length: between(rng, 0, max) }, () => pick(rng, items)))].join('; ');
  const w = new Out(join(out, 'gutenberg/pg_catalog.csv'));
  await w.write(text);
  for (let i = 0; i < count; i++) {
    const title = Array.from({ length: between(rng, 1, 7) }, () => pick(rng, titleWords)).join(' ');
    // About one title in fifteen has a subtitle on its own line, as in the catalog.
    const full = rng() < 1 / 15 ? `${capitalise(title)}\n${capitalise(pick(rng, titleWords))} ${pick(rng, titleWords)}` : capitalise(title);
    const row = pick(rng, rows);
    const fields = [String(100_000 + i), row['Type']!, isoDay(rng, 1971, 2025), full, row['Language']!,
      some(authors, 3) || (rng() < 0.9 ? pick(rng, authors) : ''), some(subjects, 4), row['LoCC']!, some(shelves, 4)];
    await w.write(`${fields.map(minimal).join(',')}\n`);
  }
  await w.close();
  return rows.length + count;
}

async function food(out: string, rng: Rng, count: number, perFood: number): Promise<number> {
  const foods = parse(await readFile(join(DATA, 'food/food.csv'), 'utf8'), { columns: true }) as Record<string, string>[];
  const segments = foods.map((f) => f['description']!.split(', '));
  const heads = segments.map((s) => s[0]!);
  const tails = segments.flatMap((s) => s.slice(1));
  const categories = (parse(await readFile(join(DATA, 'food/food_category.csv'), 'utf8'), { columns: true }) as Record<string, string>[]).map((c) => c['id']!);
  const nutrients = [1003, 1004, 1005, 1008, 1051, 1079, 1087, 1089, 1090, 1091, 1092, 1093, 1095];

  const foodCsv = new Out(join(out, 'food/food.csv'));
  const legacy = new Out(join(out, 'food/sr_legacy_food.csv'));
  const amounts = new Out(join(out, 'food/food_nutrient.csv'));
  await foodCsv.write(await readFile(join(DATA, 'food/food.csv'), 'utf8'));
  await legacy.write(await readFile(join(DATA, 'food/sr_legacy_food.csv'), 'utf8'));
  await amounts.write(await readFile(join(DATA, 'food/food_nutrient.csv'), 'utf8'));
  let nutrientId = 200_000_000;
  for (let i = 0; i < count; i++) {
    const fdc = 10_000_000 + i;
    const description = [pick(rng, heads), ...Array.from({ length: between(rng, 1, 4) }, () => pick(rng, tails))].join(', ');
    await foodCsv.write(quoted([fdc, 'sr_legacy_food', description, pick(rng, categories), '2011-09-01']));
    await legacy.write(quoted([fdc, 100_000 + i]));
    for (let n = 0; n < perFood; n++) {
      await amounts.write(quoted([nutrientId++, fdc, nutrients[n % nutrients.length]!, (Math.floor(rng() * 100_000) / 100).toString(), '', '', '', '', '', '', '']));
    }
  }
  await Promise.all([foodCsv.close(), legacy.close(), amounts.close()]);
  return foods.length + count * (1 + perFood);
}

interface Paper {
  paper_url: string;
  arxiv_id: string | null;
  title: string;
  abstract: string;
  authors: string[];
  tasks: string[];
  date: string;
  [key: string]: unknown;
}

/** Papers with Code's layout: a JSON array, two-space indented, one object per paper. */
async function pwc(out: string, rng: Rng, count: number): Promise<number> {
  const papers = JSON.parse(await readFile(join(DATA, 'pwc/papers-with-abstracts.json'), 'utf8')) as Paper[];
  const links = JSON.parse(await readFile(join(DATA, 'pwc/links-between-papers-and-code.json'), 'utf8')) as Record<string, unknown>[];
  const vocabulary = [...papers.flatMap((p) => words(`${p.title} ${p.abstract}`)),
    ...(await readFile(join(DATA, 'gutenberg/pg_catalog.csv'), 'utf8')).split(/[\s,;"]+/).filter((x) => /^[a-z]{3,}$/i.test(x))];
  const authors = papers.flatMap((p) => p.authors);
  const tasks = papers.flatMap((p) => p.tasks);
  const item = (value: unknown) => JSON.stringify(value, null, 2).replace(/^/gm, '  ');

  const paperOut = new Out(join(out, 'pwc/papers-with-abstracts.json'));
  const linkOut = new Out(join(out, 'pwc/links-between-papers-and-code.json'));
  await paperOut.write(`[\n${papers.map(item).join(',\n')}`);
  await linkOut.write(`[\n${links.map(item).join(',\n')}`);
  for (let i = 0; i < count; i++) {
    const title = capitalise(Array.from({ length: between(rng, 3, 10) }, () => pick(rng, vocabulary)).join(' '));
    const slug = `generated-${i}-${title.toLowerCase().replace(/[^a-z0-9]+/g, '-').slice(0, 40)}`;
    const arxiv = `${String(between(rng, 10, 24))}${String(between(rng, 1, 12)).padStart(2, '0')}.${String(10_000 + i).padStart(5, '0')}`;
    const paper = {
      paper_url: `https://paperswithcode.com/paper/${slug}`,
      arxiv_id: rng() < 0.9 ? arxiv : null,
      title,
      abstract: `${capitalise(Array.from({ length: between(rng, 20, 60) }, () => pick(rng, vocabulary)).join(' '))}.`,
      url_abs: `https://arxiv.org/abs/${arxiv}v1`,
      url_pdf: `https://arxiv.org/pdf/${arxiv}v1.pdf`,
      proceeding: rng() < 0.3 ? pick(rng, ['NeurIPS 2019 12', 'CVPR 2021 6', 'ICLR 2020 1', 'ACL 2022 5']) : null,
      authors: Array.from({ length: between(rng, 1, 6) }, () => pick(rng, authors)),
      tasks: [...new Set(Array.from({ length: between(rng, 0, 3) }, () => pick(rng, tasks)))],
      date: isoDay(rng, 2012, 2024),
      methods: [],
    };
    await paperOut.write(`,\n${item(paper)}`);
    if (rng() < 0.6) {
      await linkOut.write(`,\n${item({
        paper_url: paper.paper_url, paper_title: title, paper_arxiv_id: paper.arxiv_id, paper_url_abs: paper.url_abs, paper_url_pdf: paper.url_pdf,
        repo_url: `https://github.com/generated/${slug}`, is_official: rng() < 0.5, mentioned_in_paper: false, mentioned_in_github: true,
        framework: pick(rng, ['pytorch', 'tf', 'jax', 'none']),
      })}`);
    }
  }
  await paperOut.write('\n]\n');
  await linkOut.write('\n]\n');
  await Promise.all([paperOut.close(), linkOut.close()]);
  return papers.length + links.length + count;
}

/** EDGAR daily master indexes (Latin-1, LF, the preamble and dashed rule), 5,000 rows a day. */
async function sec(out: string, rng: Rng, count: number): Promise<number> {
  const tickers = Object.values(JSON.parse(await readFile(join(DATA, 'sec/company_tickers.json'), 'utf8')) as Record<string, { cik_str: number; title: string }>);
  const sample = await readFile(join(DATA, 'sec/master.20200103.idx'), 'latin1');
  const forms = sample.split('\n').flatMap((l) => (l.split('|').length === 5 && /^\d/.test(l) ? [l.split('|')[2]!] : []));
  const perDay = 5_000;
  let written = 0;
  for (let day = 0; written < count; day++) {
    const date = new Date(Date.UTC(2021, 0, 4) + day * 86_400_000);
    const stamp = date.toISOString().slice(0, 10).replace(/-/g, '');
    const w = new Out(join(out, `sec/master.${stamp}.idx`), 'latin1');
    const when = date.toLocaleDateString('en-US', { month: 'short', day: 'numeric', year: 'numeric', timeZone: 'UTC' }).replace(/ (\d),/, '  $1,');
    await w.write(`Description:           Daily Index of EDGAR Dissemination Feed\nLast Data Received:    ${when}\n` +
      'Comments:              webmaster@sec.gov\nAnonymous FTP:         ftp://ftp.sec.gov/edgar/\n \nCIK|Company Name|Form Type|Date Filed|File Name\n' +
      `${'-'.repeat(80)}\n`);
    const rows = Math.min(perDay, count - written);
    for (let i = 0; i < rows; i++) {
      const company = pick(rng, tickers);
      // The sequence has six digits: past a million filings it wraps (the random filer prefix keeps keys apart).
      const sequence = (day * perDay + i) % 1_000_000;
      const accession = `${String(between(rng, 1_000_000, 1_999_999)).padStart(10, '0')}-${stamp.slice(2, 4)}-${String(sequence).padStart(6, '0')}`;
      await w.write(`${company.cik_str}|${company.title.toUpperCase()}|${pick(rng, forms)}|${stamp}|edgar/data/${company.cik_str}/${accession}.txt\n`);
    }
    await w.close();
    written += rows;
  }
  return count;
}

export async function generateInputs(out: string, scale: number, seed: number): Promise<Record<string, number>> {
  // Everything the exporter reads is there: copies first, then the generated files over them.
  await mkdir(out, { recursive: true });
  await cp(DATA, out, { recursive: true });
  const n = (full: number) => Math.round(full * scale);
  const rng = random(seed);
  return {
    gutenberg: await gutenberg(out, rng, n(FULL_SIZE.books)),
    food: await food(out, rng, n(FULL_SIZE.foods), FULL_SIZE.nutrientsPerFood),
    pwc: await pwc(out, rng, n(FULL_SIZE.papers)),
    sec: await sec(out, rng, n(FULL_SIZE.filings)),
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { scale: { type: 'string', default: '0.01' }, seed: { type: 'string', default: '17' }, out: { type: 'string' } } });
  const scale = Number(values.scale);
  if (!(scale > 0 && scale <= 10)) throw new Error(`--scale must be a number in (0, 10], got ${values.scale}`);
  const out = values.out ?? join(DATA, '..', '..', '.data', `generated-${values.scale}`);
  const started = performance.now();
  const rows = await generateInputs(out, scale, Number(values.seed));
  const bytes = await dirBytes(out);
  console.log(JSON.stringify({ out, scale, seed: Number(values.seed), rows, mb: Math.round(bytes / 1e6), seconds: Number(((performance.now() - started) / 1000).toFixed(1)) }));
}

async function dirBytes(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += (await stat(join(entry.parentPath, entry.name))).size;
  }
  return total;
}

if (import.meta.filename === process.argv[1]) await main();

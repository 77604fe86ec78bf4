/**
 * Reads series out of Prometheus text exposition (a registry's `metrics()` or a scraped
 * /metrics), so a test can assert what some traffic moved: the value and the labels.
 */

export interface Series {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseExposition(text: string): Series[] {
  const series: Series[] = [];
  for (const line of text.split('\n')) {
    const match = LINE.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(LABEL)) labels[key!] = value!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    series.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return series;
}

/** The sum of the series named `name` whose labels include `labels` (0 when there is none yet). */
export function seriesValue(text: string, name: string, labels: Readonly<Record<string, string>> = {}): number {
  return parseExposition(text)
    .filter((s) => s.name === name && Object.entries(labels).every(([key, value]) => s.labels[key] === value))
    .reduce((sum, s) => sum + s.value, 0);
}

/** A function that reads one series' value now, from a registry or a /metrics URL. */
export function reader(source: { metrics(): Promise<string> } | string): (name: string, labels?: Record<string, string>) => Promise<number> {
  const text = typeof source === 'string' ? async () => (await fetch(source)).text() : () => source.metrics();
  return async (name, labels = {}) => seriesValue(await text(), name, labels);
}

/**
 * Reads until the value is `expected` or 15 s pass, then returns the last read. For series moved
 * after the response went out (the access log's histogram, the bytes of a streamed body), which a
 * client can see complete a moment before the server has counted it.
 */
export async function settledValue(read: () => Promise<number>, expected: number): Promise<number> {
  const deadline = Date.now() + 15_000;
  let value = await read();
  while (value !== expected && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    value = await read();
  }
  return value;
}

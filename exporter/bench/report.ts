/**
 * The export bench's printout: per run its totals, then per table (load; files) and per stage its
 * seconds, rows/s and peak RSS, read from the run's `table built`, `table files built`,
 * `stage built` and `zip built` log lines. The stages overlap (files and indexes run beside the
 * next loads), so their seconds do not add up to the run's; what follows the last load does.
 */

/** whole: the export; csv: the CSV sources' tables only; floor: DuckDB reading inputs and writing Parquet alone. */
export type Kind = 'whole' | 'csv' | 'floor';

export interface Figures {
  label: string;
  /** The input folder's label: the runs of one input are compared with each other. */
  group: string;
  kind: Kind;
  memoryLimit: string;
  rows: number;
  seconds: number;
  peakRssMb: number;
  /** User and system CPU of the run, DuckDB's threads included: a figure a loaded machine barely moves. */
  cpuSeconds: number;
  files: number;
  bytes: number;
  /** Set when the run failed (its reason is on stderr above the figures). */
  failed?: string;
  log: Record<string, unknown>[];
}

const n = (value: unknown) => Number(value ?? 0);
const rate = (rows: number, seconds: number) => Math.round(rows / Math.max(seconds, 0.01));
const count = (value: number) => value.toLocaleString('en-US');

function summary(r: Figures, all: readonly Figures[]): string {
  if (r.failed) return `${r.label}: FAILED (${r.failed}; its error is printed above), peak RSS unknown; its profile up to the failure:`;
  const floor = all.find((f) => f.group === r.group && f.kind === 'floor');
  const ratio = floor && r.kind === 'whole' ? `, ${(r.seconds / floor.seconds).toFixed(2)}× the FLOOR's ${floor.seconds} s (CPU ${(r.cpuSeconds / floor.cpuSeconds).toFixed(2)}×)` : '';
  return `${r.label}: ${count(r.rows)} rows in ${r.seconds} s = ${count(rate(r.rows, r.seconds))} rows/s${ratio}; CPU ${r.cpuSeconds} s ` +
    `(${count(rate(r.rows, r.cpuSeconds))} rows per CPU s); peak RSS ${r.peakRssMb} MB under memory_limit ${r.memoryLimit}` +
    (r.files ? `; ${r.files} files, ${(r.bytes / 1e6).toFixed(1)} MB` : '');
}

function tableRows(r: Figures) {
  const files = new Map(r.log.filter((l) => l.msg === 'table files built').map((l) => [String(l.table), l]));
  return r.log.filter((l) => l.msg === 'table built' && n(l.rows) >= 10_000).map((l) => {
    const f = files.get(String(l.table));
    return {
      table: String(l.table),
      rows: n(l.rows),
      'load (s)': n(l.loadSeconds),
      'load rows/s': rate(n(l.rows), n(l.loadSeconds)),
      'load peak RSS (MB)': n(l.peakRssMb),
      ...(f ? { 'files (s)': n(f.filesSeconds), 'files rows/s': rate(n(l.rows), n(f.filesSeconds)), 'files peak RSS (MB)': n(f.peakRssMb) } : {}),
    };
  });
}

function stageRows(r: Figures) {
  return r.log.flatMap((l) => {
    if (l.msg === 'stage built') return [{ stage: String(l.stage), 'seconds': n(l.seconds), 'peak RSS (MB)': n(l.peakRssMb) }];
    if (l.msg === 'zip built') return [{ stage: `${String(l.stage)} (${n(l.sizeMb)} MB) done, seconds since the build began`, 'seconds': n(l.seconds) }];
    return [];
  });
}

export function printRun(r: Figures, all: readonly Figures[]): void {
  console.log(`\n${summary(r, all)}`);
  const loads = r.log.filter((l) => l.msg === 'table built').reduce((sum, l) => sum + n(l.loadSeconds), 0);
  console.log(`  every table's load ${loads.toFixed(2)} s (${count(rate(r.rows, loads))} rows/s); tables of 10,000 rows or more:`);
  console.table(tableRows(r));
  const stages = stageRows(r);
  if (stages.length) console.table(stages);
}

/**
 * Streaming CSV records with the line each record starts on, so that a bad row is reported as
 * `file:line`. Text must decode cleanly in the declared encoding: a UTF-8 file with a Latin-1 byte
 * is an error, not a silent U+FFFD.
 */
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse';
import iconv from 'iconv-lite';
import { InputError } from './table-spec.ts';

export type Encoding = 'utf8' | 'latin1';

export interface CsvRecord {
  readonly line: number;
  readonly values: Record<string, string>;
}

/** `file` is the path under `inputDir` that error messages name, e.g. `food/food.csv`. */
export async function* readCsv(inputDir: string, file: string, encoding: Encoding = 'utf8'): AsyncGenerator<CsvRecord> {
  const path = join(inputDir, file);
  const source = createReadStream(path);
  const decoded = source.pipe(iconv.decodeStream(encoding === 'utf8' ? 'utf8' : 'latin1'));
  const parser = decoded.pipe(
    parse({ columns: true, bom: true, info: true, relax_column_count: false, skip_empty_lines: true }),
  );
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: Record<string, string>; info: { lines: number; columns: unknown } }>) {
      const line = startLine(info.lines, record);
      for (const value of Object.values(record)) {
        if (value.includes('\uFFFD')) throw new InputError(file, line, `text is not valid ${encoding}`);
      }
      yield { line, values: record };
    }
  } catch (error) {
    if (error instanceof InputError) throw error;
    const csvError = error as { message: string; lines?: number };
    throw new InputError(file, csvError.lines, `malformed CSV: ${csvError.message}`);
  } finally {
    source.destroy();
  }
}

/** csv-parse reports the line a record ends on; a quoted field with newlines started earlier. */
function startLine(endLine: number, record: Record<string, string>): number {
  let newlines = 0;
  for (const value of Object.values(record)) newlines += value.split('\n').length - 1;
  return endLine - newlines;
}

export function requireColumns(file: string, line: number, values: Record<string, string>, names: readonly string[]): void {
  for (const name of names) {
    if (!(name in values)) throw new InputError(file, line, `missing column ${name}`);
  }
}

export function toInteger(file: string, line: number, column: string, text: string): number | null {
  if (text === '') return null;
  if (!/^-?\d+$/.test(text)) throw new InputError(file, line, `${column} is not an integer: ${JSON.stringify(text)}`);
  return Number(text);
}

export function toNumber(file: string, line: number, column: string, text: string): number | null {
  if (text === '') return null;
  const value = Number(text);
  if (!Number.isFinite(value)) throw new InputError(file, line, `${column} is not a number: ${JSON.stringify(text)}`);
  return value;
}

/**
 * A strict RFC 4180 pass over a CSV or TSV upload before DuckDB sees it. DuckDB's sniffer is
 * lenient on purpose (it may skip leading rows or pick another quote to make a broken file fit),
 * which would turn a broken upload into silently wrong columns; this pass instead refuses it and
 * names the line. It also returns the header as written, since DuckDB renames duplicate and empty
 * headers its own way before we can normalise them.
 */
import { createReadStream } from 'node:fs';
import { CsvError, parse } from 'csv-parse';
import { SheetIngestError } from './errors.ts';

const REASONS: Record<string, string> = {
  CSV_QUOTE_NOT_CLOSED: 'a quoted value is never closed',
  CSV_INVALID_CLOSING_QUOTE: 'a quote appears inside an unquoted value',
  CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE: 'text follows a closing quote',
  CSV_RECORD_INCONSISTENT_FIELDS_LENGTH: 'a row has a different number of fields than the header',
  CSV_MAX_RECORD_SIZE: 'a row is too long',
};

export const MAX_ROW_BYTES = 2 * 1024 * 1024; // DuckDB's default max_line_size

/** The header row; throws a SheetIngestError naming the first malformed line. */
export async function checkCsv(path: string, delimiter: string, label: string): Promise<string[]> {
  const parser = createReadStream(path).pipe(
    parse({ delimiter, bom: true, skip_empty_lines: true, max_record_size: MAX_ROW_BYTES, info: true }),
  );
  let header: string[] | undefined;
  let lastLine = 0;
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
      header ??= record;
      lastLine = info.lines;
    }
  } catch (error) {
    if (!(error instanceof CsvError)) throw error;
    throw new SheetIngestError(`The ${label} file is malformed: ${REASONS[error.code] ?? 'a row could not be read'} (line ${lineOf(error, lastLine)}).`);
  }
  if (!header) throw new SheetIngestError('The file has no columns.');
  return header;
}

/** An unclosed quote is only noticed at the end of the file; it opened on the row after the last good one. */
function lineOf(error: CsvError, lastGoodLine: number): number {
  if (error.code === 'CSV_QUOTE_NOT_CLOSED') return lastGoodLine + 1;
  const lines = (error as CsvError & { lines?: unknown }).lines;
  return typeof lines === 'number' ? lines : lastGoodLine + 1;
}

/**
 * Turns what DuckDB says about a user's file into a user-safe SheetIngestError. Engine text holds
 * paths and internals, so only a line number is ever taken from it. Errors about our side
 * (IO, permissions: the sandbox refusing is our bug, not the user's file) pass through unchanged,
 * and the job is retried.
 */
import { SheetIngestError } from './errors.ts';
import { FORMAT_LABELS, type SheetFormat } from './formats.ts';

const OURS = /^(IO|Permission|Internal|Connection) Error/;

export function translateEngineError(error: unknown, format: SheetFormat): unknown {
  // Engine errors are matched by shape: the native addon's Error may belong to another realm.
  const message = (error as { message?: unknown } | undefined)?.message;
  if (error instanceof SheetIngestError || typeof message !== 'string' || OURS.test(message)) return error;
  if (message.startsWith('Out of Memory Error')) {
    return new SheetIngestError('The file needs more memory to process than a sheet may use.');
  }
  if (format === 'csv' || format === 'tsv') return csvError(message, format);
  if (format === 'json' || format === 'ndjson') return jsonError(message, format);
  return new SheetIngestError('The file is not a valid Parquet file.');
}

/** Most CSV problems are caught by the strict pass first; these are what only DuckDB sees. */
function csvError(message: string, format: SheetFormat): SheetIngestError {
  const label = FORMAT_LABELS[format];
  const line = /CSV Error on Line: (\d+)/.exec(message)?.[1];
  if (line) return malformed(label, csvReason(message), Number(line));
  return new SheetIngestError(`The file could not be read as ${label}.`);
}

function csvReason(message: string): string {
  if (/unterminated quote/i.test(message)) return 'a quoted value is never closed';
  if (/Expected Number of Columns/i.test(message)) return 'a row has a different number of fields than the header';
  if (/Could not convert|Conversion Error/i.test(message)) return 'a value does not match the type of its column';
  return 'a row could not be read';
}

function malformed(label: string, reason: string, line: number | undefined): SheetIngestError {
  return new SheetIngestError(`The ${label} file is malformed: ${reason}${line ? ` (line ${line})` : ''}.`);
}

function jsonError(message: string, format: SheetFormat): SheetIngestError {
  const shape = format === 'json' ? 'a JSON array of objects, one per row' : 'one JSON object per line';
  if (/expected records|top-level JSON array/i.test(message)) return new SheetIngestError(`The file must be ${shape}.`);
  const line = /in line (\d+)/.exec(message)?.[1];
  return new SheetIngestError(`The file is not valid ${FORMAT_LABELS[format]}${line ? ` (line ${line})` : ''}.`);
}

/**
 * `ingestSheet`: one uploaded file in, one Parquet file (zstd) out, with its row count and typed,
 * normalised columns. Framework-free: the worker calls it on local files, tests call it directly.
 */
import { mkdir, stat } from 'node:fs/promises';
import { normalizeColumnNames } from './columns.ts';
import { checkCsv } from './csv-check.ts';
import { assertUtf8File } from './encoding.ts';
import { megabytes, SheetIngestError } from './errors.ts';
import { delimiterOf, describeType, FORMAT_LABELS, isSupportedType, isTextFormat, readerSql, type SheetFormat } from './formats.ts';
import { checkJsonArrayEnd } from './json-check.ts';
import { quoteLiteral } from '@uda/shared/duckdb';
import { openSandbox, type Sandbox, type SandboxLimits } from './sandbox.ts';
import { translateEngineError } from './translate.ts';

export interface SheetColumn {
  readonly name: string;
  readonly type: string;
}

export interface IngestResult {
  readonly rowCount: number;
  readonly columns: SheetColumn[];
}

export interface IngestLimits extends SandboxLimits {
  /** The upload, as stored. */
  readonly maxBytes: number;
  /** Rows and bytes of data once decompressed: a tiny Parquet file can expand to 100 M rows. */
  readonly maxRows: number;
  readonly maxDataBytes: number;
}

export interface IngestRequest {
  readonly inputPath: string;
  readonly format: SheetFormat;
  readonly outputPath: string;
  readonly tempDir: string;
  readonly limits: IngestLimits;
}

export async function ingestSheet(request: IngestRequest): Promise<IngestResult> {
  const { size } = await stat(request.inputPath);
  // Checked before any parsing, so an oversized file costs nothing.
  if (size > request.limits.maxBytes) throw new SheetIngestError(`The file is larger than the ${megabytes(request.limits.maxBytes)} limit.`);
  if (size === 0) throw new SheetIngestError('The file is empty: it has no columns.');
  const header = await precheck(request, size);
  await mkdir(request.tempDir, { recursive: true });
  const sandbox = await openSandbox(request, request.limits);
  try {
    return await convert(sandbox, request, header);
  } catch (error) {
    throw translateEngineError(error, request.format);
  } finally {
    sandbox.close();
  }
}

/** Checks in Node what DuckDB would accept or report badly; returns a CSV's header as written. */
async function precheck(request: IngestRequest, size: number): Promise<string[] | undefined> {
  if (!isTextFormat(request.format)) return undefined;
  await assertUtf8File(request.inputPath);
  if (request.format === 'json') await checkJsonArrayEnd(request.inputPath, size);
  if (request.format !== 'csv' && request.format !== 'tsv') return undefined;
  return checkCsv(request.inputPath, delimiterOf(request.format), FORMAT_LABELS[request.format]);
}

async function convert(sandbox: Sandbox, request: IngestRequest, header: string[] | undefined): Promise<IngestResult> {
  const reader = readerSql(request.format, request.inputPath);
  const described = await sandbox.query(`DESCRIBE SELECT * FROM ${reader}`);
  const source = described.map((row) => ({ name: String(row.column_name), type: String(row.column_type) }));
  if (source.length === 0) throw new SheetIngestError('The file has no columns.');
  const unsupported = source.find((column) => !isSupportedType(column.type));
  if (unsupported) {
    throw new SheetIngestError(
      `Column "${unsupported.name}" has an unsupported type (${describeType(unsupported.type)}). ` +
        'Sheets hold flat values only: numbers, text, booleans, dates, times, timestamps and UUIDs.',
    );
  }
  // DuckDB renames duplicate and empty headers (`name_1`, `column2`); normalise what the user wrote.
  const written = header?.length === source.length ? header : source.map((column) => column.name);
  const names = normalizeColumnNames(written);
  await checkExpandedSize(sandbox, reader, source, request.limits);
  const select = source.map((column, i) => `${identifier(column.name)} AS ${identifier(names[i] ?? column.name)}`);
  const copied = await sandbox.query(
    `COPY (SELECT ${select.join(', ')} FROM ${reader}) TO ${quoteLiteral(request.outputPath)} (FORMAT parquet, COMPRESSION zstd)`,
  );
  const rowCount = Number(copied[0]?.Count ?? 0);
  return { rowCount, columns: source.map((column, i) => ({ name: names[i] ?? column.name, type: column.type })) };
}

/**
 * Sheet bombs (a small upload that expands to a huge table): counts rows and the bytes of every value as text, reading at most one
 * row past the ceiling, so a file that expands to millions of rows stops at the limit.
 */
async function checkExpandedSize(sandbox: Sandbox, reader: string, source: readonly SheetColumn[], limits: IngestLimits): Promise<void> {
  const bytes = source.map((column) => `coalesce(strlen(CAST(${identifier(column.name)} AS VARCHAR)), 0)`).join(' + ');
  const [measured] = await sandbox.query(
    `SELECT count(*)::BIGINT AS n, coalesce(sum(${bytes}), 0)::BIGINT AS bytes FROM (SELECT * FROM ${reader} LIMIT ${limits.maxRows + 1})`,
  );
  if (Number(measured?.n ?? 0) > limits.maxRows) {
    throw new SheetIngestError(`The file has more than ${limits.maxRows.toLocaleString('en-US')} rows, the limit for a sheet.`);
  }
  if (Number(measured?.bytes ?? 0) > limits.maxDataBytes) {
    throw new SheetIngestError(`The file holds more than ${megabytes(limits.maxDataBytes)} of data once decompressed, the limit for a sheet.`);
  }
}

function identifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

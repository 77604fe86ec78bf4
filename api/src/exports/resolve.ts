/**
 * Which manifest file an export request names (DECISIONS §7). Bulk files by name; one source as
 * `/{source}?format=csv|parquet[&table=…]`: a source with several tables (census, food, pwc, sec)
 * serves its primary table, the first in the catalog, unless `table` names another of its tables.
 * `?version=` pins a kept version; the current manifest otherwise.
 */
import { findSource, type Source } from '@uda/shared/catalog';
import { type ExportFile, type Manifest, VERSION_PATTERN } from '@uda/shared/manifest';
import { ApiError } from '../errors/api-error.ts';
import { ErrorCode } from '../errors/codes.ts';
import type { Manifests } from '../sql/export-version.ts';
import type { ExportPriceKind } from '../prices.ts';

export const BULK_FILES = ['service.db', 'service.parquet.zip', 'service.csv.zip'] as const;
const FORMATS = ['csv', 'parquet'] as const;

export interface ExportRequest {
  readonly name: string;
  readonly format?: string;
  readonly table?: string;
  readonly version?: string;
}

export interface ResolvedExport {
  readonly file: ExportFile;
  readonly version: string;
  readonly priceKind: ExportPriceKind;
  readonly downloadName: string;
}

export async function resolveExport(manifests: Manifests, request: ExportRequest): Promise<ResolvedExport> {
  const wanted = fileNameOf(request);
  const manifest = await manifestFor(manifests, request.version);
  const file = manifest.files.find((f) => f.name === wanted.name);
  if (!file) throw new ApiError(ErrorCode.EXPORT_NOT_FOUND, { message: `Export ${wanted.name} is not in version ${manifest.version}.` });
  return { file, version: manifest.version, priceKind: wanted.priceKind, downloadName: wanted.downloadName };
}

function fileNameOf(request: ExportRequest): { name: string; priceKind: ExportPriceKind; downloadName: string } {
  if ((BULK_FILES as readonly string[]).includes(request.name)) return { name: request.name, priceKind: 'bulk', downloadName: request.name };
  // A file name next to the bulk files (DuckDB probes `service.db.wal` when it attaches the database)
  // is a file that does not exist, a 404 as a static server answers it; source ids have no dot.
  if (request.name.includes('.')) {
    throw new ApiError(ErrorCode.EXPORT_NOT_FOUND, { message: `There is no export file ${request.name}. Files: ${BULK_FILES.join(', ')}.` });
  }
  const source = findSource(request.name);
  if (!source) throw invalid(`Unknown export "${request.name}". Use service.db, service.parquet.zip, service.csv.zip or a source id.`);
  const format = request.format ?? 'csv';
  if (!(FORMATS as readonly string[]).includes(format)) throw invalid(`Unsupported format "${format}". Use format=csv or format=parquet.`);
  const table = tableOf(source, request.table);
  return { name: `tables/${table}.${format}`, priceKind: 'source', downloadName: `${table}.${format}` };
}

function tableOf(source: Source, table: string | undefined): string {
  const names = source.tables.map((t) => t.name);
  if (table === undefined) return names[0] ?? source.id;
  if (names.includes(table)) return table;
  throw invalid(`Source ${source.id} has no table "${table}". Its tables: ${names.join(', ')}.`);
}

async function manifestFor(manifests: Manifests, version: string | undefined): Promise<Manifest> {
  if (version !== undefined && !VERSION_PATTERN.test(version)) throw invalid(`Malformed version "${version}".`);
  let manifest: Manifest | undefined;
  try {
    manifest = version === undefined ? await manifests.current() : await manifests.version(version);
  } catch {
    throw new ApiError(ErrorCode.EXPORT_UNAVAILABLE, {}, { 'Retry-After': '5' });
  }
  if (manifest) return manifest;
  const message = version === undefined ? 'No export has been built yet.' : `Export version ${version} is not kept (the last 3 versions are).`;
  throw new ApiError(ErrorCode.EXPORT_NOT_FOUND, { message });
}

function invalid(message: string): ApiError {
  return new ApiError(ErrorCode.INVALID_INPUT, { message });
}

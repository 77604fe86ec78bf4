/** Which upload format a file is, from its name first and its content type second. */
export const UPLOAD_FORMATS = ['csv', 'tsv', 'json', 'ndjson', 'parquet'] as const;
export type UploadFormat = (typeof UPLOAD_FORMATS)[number];

const BY_EXTENSION: Record<string, UploadFormat> = {
  csv: 'csv',
  tsv: 'tsv',
  tab: 'tsv',
  json: 'json',
  ndjson: 'ndjson',
  jsonl: 'ndjson',
  parquet: 'parquet',
};

const BY_TYPE: Record<string, UploadFormat> = {
  'text/csv': 'csv',
  'text/tab-separated-values': 'tsv',
  'application/json': 'json',
  'application/x-ndjson': 'ndjson',
  'application/jsonl': 'ndjson',
  'application/vnd.apache.parquet': 'parquet',
};

export function formatOf(fileName: string, contentType: string): UploadFormat | undefined {
  const extension = /\.([a-z0-9]+)$/i.exec(fileName)?.[1]?.toLowerCase();
  const byName = extension === undefined ? undefined : BY_EXTENSION[extension];
  return byName ?? BY_TYPE[contentType.split(';')[0]!.trim().toLowerCase()];
}

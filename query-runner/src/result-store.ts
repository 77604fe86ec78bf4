/**
 * Stored results (DECISIONS §6): each finished result is written once under
 * `results/<queryId>/<createdAtMs>/`, so a re-run after the window gets new immutable objects and
 * never rewrites bytes a client may be range-reading. Parquet is written at once; CSV and JSON are
 * produced from it on first request and stored beside it.
 */
import { createWriteStream } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { ObjectStore } from '@uda/shared/object-store';
import type { ResultFormat, ResultMeta, StoredObject } from '@uda/shared/runner-contract';
import { tooLargeError } from './errors.ts';
import type { ResultWriter } from './result-writer.ts';

export const CONTENT_TYPES: Readonly<Record<ResultFormat, string>> = {
  parquet: 'application/vnd.apache.parquet',
  csv: 'text/csv; charset=utf-8',
  json: 'application/json',
};

export function resultKey(queryId: string, createdAtMs: number, format: ResultFormat): string {
  return `results/${queryId}/${createdAtMs}/result.${format}`;
}

/** Rows as the JSON array text that is stored and served. */
export function rowsJson(rows: readonly Record<string, unknown>[]): Buffer {
  return Buffer.from(JSON.stringify(rows));
}

export interface ResultStoreOptions {
  readonly store: ObjectStore;
  readonly writer: ResultWriter;
  /** Local scratch folder for files on their way to or from the store. */
  readonly scratchDir: string;
  readonly maxBytes: number;
}

export class ResultStore {
  private readonly options: ResultStoreOptions;

  constructor(options: ResultStoreOptions) {
    this.options = options;
  }

  async putFile(key: string, path: string, format: ResultFormat): Promise<StoredObject> {
    const { size } = await stat(path);
    if (size > this.options.maxBytes) throw tooLargeError(this.options.maxBytes);
    const info = await this.options.store.putFile(key, path, { contentType: CONTENT_TYPES[format] });
    return { key, size: info.size, etag: info.etag, contentType: CONTENT_TYPES[format] };
  }

  /** Stores the rows' JSON array text (`rowsJson`), the bytes every later read serves as they are. */
  async putRows(key: string, rowsJson: Buffer): Promise<StoredObject> {
    if (rowsJson.length > this.options.maxBytes) throw tooLargeError(this.options.maxBytes);
    const info = await this.options.store.putBytes(key, rowsJson, { contentType: CONTENT_TYPES.json });
    return { key, size: info.size, etag: info.etag, contentType: CONTENT_TYPES.json };
  }

  /** The stored rows' JSON text, unparsed: the runner passes it on as it is. */
  async readRows(object: StoredObject): Promise<Buffer> {
    const body = await this.options.store.get(object.key);
    if (!body) throw new Error(`stored result ${object.key} is missing`);
    const chunks: Buffer[] = [];
    for await (const chunk of body.body) chunks.push(Buffer.from(chunk as Uint8Array));
    return Buffer.concat(chunks);
  }

  /** Produces a missing CSV or JSON object from the stored Parquet; returns the updated entry. */
  async produce(meta: ResultMeta, format: 'csv' | 'json'): Promise<ResultMeta> {
    const createdAtMs = Date.parse(meta.createdAt);
    const parquetPath = join(this.options.scratchDir, `${meta.queryId}-${createdAtMs}-${process.pid}.parquet`);
    const outPath = `${parquetPath}.${format}`;
    try {
      const body = await this.options.store.get(meta.objects.parquet.key);
      if (!body) throw new Error(`stored result ${meta.objects.parquet.key} is missing`);
      await pipeline(body.body, createWriteStream(parquetPath));
      const key = resultKey(meta.queryId, createdAtMs, format);
      const object =
        format === 'csv'
          ? (await this.options.writer.parquetToCsv(parquetPath, outPath), await this.putFile(key, outPath, 'csv'))
          : await this.putRows(key, rowsJson(await this.options.writer.parquetToRows(parquetPath)));
      return { ...meta, objects: { ...meta.objects, [format]: object } };
    } finally {
      await rm(parquetPath, { force: true });
      await rm(outPath, { force: true });
    }
  }
}

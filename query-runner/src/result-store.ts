/**
 * Stored results (DECISIONS §6): each finished result is written once under
 * `results/<queryId>/<createdAtMs>/`, so a re-run after the window gets new immutable objects and
 * never rewrites bytes a client may be range-reading. Parquet is written at once; CSV and JSON are
 * produced from it on first request and stored beside it. Every local scratch file has one owner
 * (a name no other run or conversion uses) and is read only after it was renamed into place.
 */
import { createWriteStream } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { rename, rm, stat } from 'node:fs/promises';
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
  /** Conversions under way in this process, by the key they will store. */
  private readonly producing = new Map<string, Promise<ResultMeta>>();

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

  /**
   * Produces a missing CSV or JSON object from the stored Parquet; returns the updated entry.
   * Concurrent requests for the same object in this process share one conversion (a conversion
   * is the same bytes whoever makes it), and each conversion works on scratch files of its own.
   */
  produce(meta: ResultMeta, format: 'csv' | 'json'): Promise<ResultMeta> {
    const key = resultKey(meta.queryId, Date.parse(meta.createdAt), format);
    let pending = this.producing.get(key);
    if (!pending) {
      pending = this.convert(meta, format, key).finally(() => this.producing.delete(key));
      this.producing.set(key, pending);
    }
    return pending;
  }

  private async convert(meta: ResultMeta, format: 'csv' | 'json', key: string): Promise<ResultMeta> {
    const scratch = join(this.options.scratchDir, `produce-${randomUUID()}`);
    const parquetPath = `${scratch}.parquet`;
    const outPath = `${scratch}.${format}`;
    try {
      await this.download(meta.objects.parquet.key, parquetPath);
      const object =
        format === 'csv'
          ? await this.publishedCsv(parquetPath, outPath, key)
          : await this.putRows(key, rowsJson(await this.options.writer.parquetToRows(parquetPath)));
      return { ...meta, objects: { ...meta.objects, [format]: object } };
    } finally {
      await Promise.all([rm(parquetPath, { force: true }), rm(outPath, { force: true }), rm(`${parquetPath}.part`, { force: true }), rm(`${outPath}.part`, { force: true })]);
    }
  }

  /** Downloads an object to `path`, which appears (by rename) only once every byte is there. */
  private async download(key: string, path: string): Promise<void> {
    const body = await this.options.store.get(key);
    if (!body) throw new Error(`stored result ${key} is missing`);
    await pipeline(body.body, createWriteStream(`${path}.part`));
    await rename(`${path}.part`, path);
  }

  private async publishedCsv(parquetPath: string, csvPath: string, key: string): Promise<StoredObject> {
    await this.options.writer.parquetToCsv(parquetPath, `${csvPath}.part`);
    await rename(`${csvPath}.part`, csvPath);
    return this.putFile(key, csvPath, 'csv');
  }
}

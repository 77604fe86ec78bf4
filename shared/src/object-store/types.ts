import type { Readable } from 'node:stream';

export interface ObjectInfo {
  readonly key: string;
  readonly size: number;
  /** Strong ETag, quoted as on the wire (`"abc…"`). Stable for the object's lifetime. */
  readonly etag: string;
  readonly lastModified: Date;
  readonly contentType?: string;
}

/** Inclusive byte range, already resolved against the object's size. */
export interface ByteRange {
  readonly start: number;
  readonly end: number;
}

export interface ObjectBody extends ObjectInfo {
  readonly body: Readable;
  /** Present when a range was asked for. */
  readonly range?: ByteRange;
}

export interface PutOptions {
  readonly contentType?: string;
}

/**
 * The one object-store interface (S3 or a local folder). Objects are written whole: a reader never
 * sees a half-written object under its final key.
 */
export interface ObjectStore {
  readonly description: string;
  putFile(key: string, path: string, options?: PutOptions): Promise<ObjectInfo>;
  putBytes(key: string, bytes: Uint8Array | string, options?: PutOptions): Promise<ObjectInfo>;
  /** Undefined when the object does not exist. */
  head(key: string): Promise<ObjectInfo | undefined>;
  /** Undefined when the object does not exist. A range outside the object is the caller's to check. */
  get(key: string, range?: ByteRange): Promise<ObjectBody | undefined>;
  list(prefix: string): Promise<ObjectInfo[]>;
  delete(keys: readonly string[]): Promise<void>;
}

export class ObjectStoreError extends Error {
  override readonly name = 'ObjectStoreError';
}

/**
 * S3 (or any S3-compatible server) as the object store. Large files go up as multipart uploads;
 * reads forward the byte range to S3 so that a large object never sits in memory.
 */
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { BuildMiddleware, MetadataBearer } from '@smithy/types';
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { ByteRange, ObjectBody, ObjectInfo, ObjectStore, PutOptions } from './types.ts';
import { ObjectStoreError } from './types.ts';

export interface S3StoreOptions {
  readonly bucket: string;
  readonly region: string;
  readonly endpoint?: string | undefined;
  readonly accessKeyId?: string | undefined;
  readonly secretAccessKey?: string | undefined;
  readonly forcePathStyle: boolean;
  /** Files at or above this size are uploaded in parts of this size. */
  readonly partSizeBytes: number;
}

/** S3 allows at most 1,000 keys per DeleteObjects call. */
const DELETE_BATCH = 1000;

export class S3Store implements ObjectStore {
  readonly description: string;
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly partSize: number;

  constructor(options: S3StoreOptions) {
    this.bucket = options.bucket;
    this.partSize = options.partSizeBytes;
    this.description = `s3://${options.bucket}${options.endpoint ? ` at ${options.endpoint}` : ''}`;
    const credentials =
      options.accessKeyId && options.secretAccessKey
        ? { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey }
        : undefined;
    this.client = new S3Client({
      region: options.region,
      endpoint: options.endpoint,
      forcePathStyle: options.forcePathStyle,
      ...(credentials ? { credentials } : {}),
      // Non-AWS servers corrupt or refuse streamed uploads with the SDK's default checksums.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      maxAttempts: 3,
    });
    this.client.middlewareStack.add(addContentMd5ToDeleteObjects, { step: 'build', name: 'contentMd5ForDeleteObjects' });
  }

  async putFile(key: string, path: string, options?: PutOptions): Promise<ObjectInfo> {
    const { size } = await stat(path);
    if (size < this.partSize) {
      // A buffer, not a stream: the SDK retries only bodies it can send again, so a streamed body
      // turned one brief S3 error (a 503 SlowDown under load) into a failed upload. A file below
      // the part size is small enough to hold.
      const body = await readFile(path);
      await this.wrap(() =>
        this.client.send(
          new PutObjectCommand({
            Bucket: this.bucket,
            Key: key,
            Body: body,
            ContentLength: size,
            ContentType: options?.contentType,
          }),
        ),
      );
    } else {
      const upload = new Upload({
        client: this.client,
        params: { Bucket: this.bucket, Key: key, Body: createReadStream(path), ContentType: options?.contentType },
        partSize: this.partSize,
        queueSize: 4,
        // A failed multipart upload is aborted, so no half-written object or orphan parts remain.
        leavePartsOnError: false,
      });
      await this.wrap(() => upload.done());
    }
    return this.mustHead(key);
  }

  async putBytes(key: string, bytes: Uint8Array | string, options?: PutOptions): Promise<ObjectInfo> {
    await this.wrap(() =>
      this.client.send(
        new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: bytes, ContentType: options?.contentType }),
      ),
    );
    return this.mustHead(key);
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    try {
      const out = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return {
        key,
        size: out.ContentLength ?? 0,
        etag: out.ETag ?? '""',
        lastModified: out.LastModified ?? new Date(0),
        ...(out.ContentType ? { contentType: out.ContentType } : {}),
      };
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw asStoreError(error, `HEAD ${key}`);
    }
  }

  async get(key: string, range?: ByteRange): Promise<ObjectBody | undefined> {
    try {
      const out = await this.client.send(
        new GetObjectCommand({
          Bucket: this.bucket,
          Key: key,
          ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
        }),
      );
      const total = range ? totalFromContentRange(out.ContentRange) : out.ContentLength;
      const info: ObjectInfo = {
        key,
        size: total ?? 0,
        etag: out.ETag ?? '""',
        lastModified: out.LastModified ?? new Date(0),
        ...(out.ContentType ? { contentType: out.ContentType } : {}),
      };
      const body = out.Body as Readable;
      return range ? { ...info, body, range } : { ...info, body };
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw asStoreError(error, `GET ${key}`);
    }
  }

  async list(prefix: string): Promise<ObjectInfo[]> {
    const found: ObjectInfo[] = [];
    let token: string | undefined;
    do {
      const out = await this.wrap(() =>
        this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token })),
      );
      for (const item of out.Contents ?? []) {
        if (!item.Key) continue;
        found.push({
          key: item.Key,
          size: item.Size ?? 0,
          etag: item.ETag ?? '""',
          lastModified: item.LastModified ?? new Date(0),
        });
      }
      token = out.IsTruncated ? out.NextContinuationToken : undefined;
    } while (token);
    return found;
  }

  async delete(keys: readonly string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += DELETE_BATCH) {
      const batch = keys.slice(i, i + DELETE_BATCH);
      await this.wrap(() =>
        this.client.send(
          new DeleteObjectsCommand({
            Bucket: this.bucket,
            Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true },
          }),
        ),
      );
    }
  }

  private async mustHead(key: string): Promise<ObjectInfo> {
    const info = await this.head(key);
    if (!info) throw new ObjectStoreError(`object ${key} missing right after upload`);
    return info;
  }

  private async wrap<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      throw asStoreError(error, 'S3 request');
    }
  }
}

/**
 * S3 requires Content-MD5 on DeleteObjects. The SDK now sends a CRC32 checksum instead, which AWS
 * accepts and OpenStack Swift's s3api refuses (400 "Missing required header … Content-MD5").
 */
const addContentMd5ToDeleteObjects: BuildMiddleware<object, MetadataBearer> = (next, context) => async (args) => {
  const request = args.request as { body?: unknown; headers?: Record<string, string> };
  const body = request.body;
  const isDelete = (context as { commandName?: string }).commandName === 'DeleteObjectsCommand';
  if (isDelete && request.headers && (typeof body === 'string' || body instanceof Uint8Array)) {
    request.headers['content-md5'] = createHash('md5').update(body).digest('base64');
  }
  return next(args);
};

function isMissing(error: unknown): boolean {
  if (!(error instanceof S3ServiceException)) return false;
  return error.name === 'NotFound' || error.name === 'NoSuchKey' || error.$metadata.httpStatusCode === 404;
}

function asStoreError(error: unknown, what: string): ObjectStoreError {
  if (error instanceof ObjectStoreError) return error;
  const detail = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return new ObjectStoreError(`${what} failed: ${detail}`, { cause: error });
}

function totalFromContentRange(header: string | undefined): number | undefined {
  const total = header?.split('/')[1];
  return total && total !== '*' ? Number(total) : undefined;
}

/**
 * A fresh bucket on the real S3-compatible server for one test file, and a store over it.
 */
import { randomBytes } from 'node:crypto';
import { CreateBucketCommand, DeleteBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { S3Store } from '@uda/shared/object-store';

export interface TestBucket {
  readonly bucket: string;
  readonly store: S3Store;
  readonly env: Record<string, string>;
  remove(): Promise<void>;
}

export function s3Env(): Record<string, string> {
  const endpoint = process.env.S3_ENDPOINT;
  if (!endpoint) throw new Error('S3_ENDPOINT is not set: the jest global setup starts or finds the S3 server');
  return {
    S3_ENDPOINT: endpoint,
    S3_ACCESS_KEY_ID: process.env.S3_ACCESS_KEY_ID ?? '',
    S3_SECRET_ACCESS_KEY: process.env.S3_SECRET_ACCESS_KEY ?? '',
    S3_REGION: process.env.S3_REGION ?? 'us-east-1',
    S3_FORCE_PATH_STYLE: 'true',
  };
}

export function rawS3Client(): S3Client {
  const env = s3Env();
  return new S3Client({
    endpoint: env.S3_ENDPOINT,
    region: env.S3_REGION,
    forcePathStyle: true,
    credentials: { accessKeyId: env.S3_ACCESS_KEY_ID ?? '', secretAccessKey: env.S3_SECRET_ACCESS_KEY ?? '' },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

/** A store over `bucket` on the test S3 server, whether or not the bucket exists. */
export function storeOn(bucket: string): S3Store {
  const env = s3Env();
  return new S3Store({
    bucket,
    region: env.S3_REGION ?? 'us-east-1',
    endpoint: env.S3_ENDPOINT,
    accessKeyId: env.S3_ACCESS_KEY_ID,
    secretAccessKey: env.S3_SECRET_ACCESS_KEY,
    forcePathStyle: true,
    partSizeBytes: 5 * 1024 * 1024,
  });
}

export async function createTestBucket(label: string): Promise<TestBucket> {
  const bucket = `uda-${label}-${randomBytes(4).toString('hex')}`.toLowerCase();
  const client = rawS3Client();
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  const env: Record<string, string> = { ...s3Env(), S3_BUCKET: bucket };
  const store = storeOn(bucket);
  return {
    bucket,
    store,
    env,
    async remove() {
      const objects = await store.list('');
      await store.delete(objects.map((o) => o.key));
      await client.send(new DeleteBucketCommand({ Bucket: bucket }));
      client.destroy();
    },
  };
}

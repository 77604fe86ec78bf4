/**
 * The object store: one interface, two adapters, chosen by config. `objectStoreEnv` is spread into
 * the config schema of every workspace that reads or writes objects.
 */
import { join } from 'node:path';
import { z } from 'zod';
import { envBoolean } from '../config.ts';
import { LocalFolderStore } from './local.ts';
import { S3Store } from './s3.ts';

export type { ByteRange, ObjectBody, ObjectInfo, ObjectStore, PutOptions } from './types.ts';
export { ObjectStoreError } from './types.ts';
export { LocalFolderStore } from './local.ts';
export { S3Store } from './s3.ts';

export const objectStoreEnv = {
  S3_BUCKET: z
    .string()
    .optional()
    .describe('S3 bucket for exports, results and sheets; unset means a local folder under DATA_DIR'),
  S3_ENDPOINT: z.url().optional().describe('S3-compatible endpoint URL; unset means AWS'),
  S3_REGION: z.string().default('us-east-1').describe('S3 region'),
  S3_ACCESS_KEY_ID: z.string().optional().describe('S3 access key id; unset uses the AWS default credential chain'),
  S3_SECRET_ACCESS_KEY: z.string().optional().describe('S3 secret access key'),
  S3_FORCE_PATH_STYLE: envBoolean.default(false).describe('Path-style S3 addressing, for non-AWS servers'),
  S3_PART_SIZE_MB: z.coerce
    .number()
    .int()
    .min(5)
    .max(512)
    .default(16)
    .describe('Multipart upload part size; smaller files go up in one request'),
};

type ObjectStoreConfig = z.infer<z.ZodObject<typeof objectStoreEnv>> & { DATA_DIR: string };

export function createObjectStore(config: ObjectStoreConfig): LocalFolderStore | S3Store {
  if (!config.S3_BUCKET) return new LocalFolderStore(join(config.DATA_DIR, 'objects'));
  return new S3Store({
    bucket: config.S3_BUCKET,
    region: config.S3_REGION,
    endpoint: config.S3_ENDPOINT,
    accessKeyId: config.S3_ACCESS_KEY_ID,
    secretAccessKey: config.S3_SECRET_ACCESS_KEY,
    forcePathStyle: config.S3_FORCE_PATH_STYLE,
    partSizeBytes: config.S3_PART_SIZE_MB * 1024 * 1024,
  });
}

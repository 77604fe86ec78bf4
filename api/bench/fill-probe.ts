/**
 * Scratch probe (not committed): CPU of one S3 → file copy by writer kind.
 */
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { pipeline } from 'node:stream/promises';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { S3Store } from '@uda/shared/object-store';
import { PooledFileWriter } from '../src/objects/pooled-file-writer.ts';
import { spawnJson } from './sql-fixtures.ts';

const NODE = join(process.cwd(), 'node_modules/.bin/node');
const s3 = await spawnJson<{ endpoint: string }>(NODE, [join(import.meta.dirname, 's3-server.ts')]);
const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
const bucket = 'probe';
await new S3Client({ endpoint: s3.info.endpoint, region: 'us-east-1', forcePathStyle: true, credentials }).send(new CreateBucketCommand({ Bucket: bucket }));
const store = new S3Store({ bucket, region: 'us-east-1', endpoint: s3.info.endpoint, ...credentials, forcePathStyle: true, partSizeBytes: 16 * 1024 * 1024 });
const MB = Number(process.env.MB ?? 200);
const path = '/tmp/warmprobe/src.bin';
const { writeFile } = await import('node:fs/promises');
await writeFile(path, randomBytes(MB * 1024 * 1024));
await store.putFile('big.bin', path);
let gcs: Record<string, number> = {};
new PerformanceObserver((list) => { for (const e of list.getEntries()) { const k = String((e as unknown as { detail: { kind: number } }).detail.kind); gcs[k] = (gcs[k] ?? 0) + 1; } }).observe({ entryTypes: ['gc'] });
async function once(kind: string): Promise<void> {
  const out = `/tmp/warmprobe/out-${kind}`;
  await rm(out, { force: true });
  gcs = {};
  const cpu = process.cpuUsage();
  const start = performance.now();
  const object = (await store.get('big.bin'))!;
  if (kind === 'stream') await pipeline(object.body, createWriteStream(out, { flags: 'wx', highWaterMark: 1024 * 1024 }));
  else if (kind === 'pooled') await pipeline(object.body, new PooledFileWriter(out));
  else { for await (const _ of object.body) void _; }
  const ms = performance.now() - start;
  const used = process.cpuUsage(cpu);
  const mb = (MB * 1024 * 1024) / 1e6;
  console.log(`${kind.padEnd(7)} ${(mb / (ms / 1000)).toFixed(0)} MB/s  user ${(used.user / 1000 / mb).toFixed(2)} sys ${(used.system / 1000 / mb).toFixed(2)} ms/MB  gc ${JSON.stringify(gcs)}`);
}
const retained: unknown[] = [];
if (process.env.HEAP_MB) for (let i = 0; i < Number(process.env.HEAP_MB) * 1024 * 10; i++) retained.push({ a: i, b: String(i), c: [i, i + 1] });
console.log('heap used MB', (process.memoryUsage().heapUsed / 1e6).toFixed(0));
for (let i = 0; i < 2; i++) for (const kind of ['drain', 'pooled']) await once(kind);
s3.child.kill('SIGKILL');

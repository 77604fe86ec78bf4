/**
 * A brief S3 error (a 503 SlowDown, as S3 sends under load) must not fail an upload: the SDK
 * retries, but only bodies it can replay. A proxy in front of the real S3-compatible server answers
 * the first PUT with a 503 and forwards everything else.
 */
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { type IncomingMessage, type Server, type ServerResponse, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestBucket, type TestBucket } from '@uda/test-support/s3';
import { S3Store } from './s3.ts';

const SLOW_DOWN = '<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>';

function forward(target: URL, req: IncomingMessage, res: ServerResponse): void {
  const upstream = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  req.pipe(upstream);
}

/** Fails the first `failures` PUTs with a 503 after reading their bodies; forwards the rest. */
async function startFlakyProxy(target: URL, failures: number): Promise<{ server: Server; url: string; failed: () => number }> {
  let failed = 0;
  const server = createServer((req, res) => {
    if (req.method === 'PUT' && failed < failures) {
      failed++;
      req.resume();
      req.on('end', () => res.writeHead(503, { 'Content-Type': 'application/xml' }).end(SLOW_DOWN));
      return;
    }
    forward(target, req, res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, failed: () => failed };
}

describe('S3Store under a brief S3 error', () => {
  let bucket: TestBucket;
  let dir: string;

  beforeAll(async () => {
    bucket = await createTestBucket('retry');
    dir = await mkdtemp(join(tmpdir(), 'uda-s3-retry-'));
  });
  afterAll(async () => {
    await bucket.remove();
    await rm(dir, { recursive: true, force: true });
  });

  it('stores a single-part file whole when the first PUT answers 503', async () => {
    const proxy = await startFlakyProxy(new URL(bucket.env.S3_ENDPOINT ?? ''), 1);
    const store = new S3Store({
      bucket: bucket.bucket,
      region: bucket.env.S3_REGION ?? 'us-east-1',
      endpoint: proxy.url,
      accessKeyId: bucket.env.S3_ACCESS_KEY_ID,
      secretAccessKey: bucket.env.S3_SECRET_ACCESS_KEY,
      forcePathStyle: true,
      partSizeBytes: 5 * 1024 * 1024,
    });
    try {
      const path = join(dir, 'result.parquet');
      const bytes = Buffer.from('PAR1'.repeat(4096));
      await writeFile(path, bytes);
      const info = await store.putFile('results/retried.parquet', path);
      expect(proxy.failed()).toBe(1);
      expect(info.size).toBe(bytes.length);
      const got = await bucket.store.get('results/retried.parquet');
      expect(Buffer.concat(await got!.body.toArray()).equals(bytes)).toBe(true);
    } finally {
      proxy.server.close();
    }
  });
});

/**
 * sendObject over real HTTP on loopback, from the real S3-compatible server.
 */
import { createServer, type Server } from 'node:http';
import { request } from 'node:http';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestBucket, type TestBucket } from '@uda/test-support/s3';
import { sendObject, type SendOutcome } from './send-object.ts';

let bucket: TestBucket;
let server: Server;
let base: string;
const outcomes: SendOutcome[] = [];
const small = Buffer.from('0123456789abcdefghijklmnopqrstuvwxyz');
const large = randomBytes(8 * 1024 * 1024);

beforeAll(async () => {
  bucket = await createTestBucket('send');
  await bucket.store.putBytes('files/small.csv', small);
  await bucket.store.putBytes('files/large.parquet', large);
  server = createServer((req, res) => {
    const key = `files/${(req.url ?? '').slice(1)}`;
    void sendObject(req, res, {
      store: bucket.store,
      key,
      contentType: key.endsWith('.csv') ? 'text/csv' : 'application/vnd.apache.parquet',
      downloadName: key.split('/').pop()!,
      headers: { 'X-Service-Success': 'true' },
    }).then((outcome) => {
      outcomes.push(outcome);
      if (outcome.status === 404) res.writeHead(404).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.close();
  await bucket.remove();
});

describe('sendObject', () => {
  it('200 with the whole body, length, validators and no Content-Range', async () => {
    const res = await fetch(`${base}/small.csv`);
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(small)).toBe(true);
    expect(res.headers.get('content-length')).toBe(String(small.length));
    expect(res.headers.get('etag')).toMatch(/^"[^"]+"$/);
    expect(res.headers.get('last-modified')).toMatch(/GMT$/);
    expect(res.headers.get('accept-ranges')).toBe('bytes');
    expect(res.headers.get('content-range')).toBeNull();
    expect(res.headers.get('content-encoding')).toBeNull();
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="small.csv"');
    expect(res.headers.get('x-service-success')).toBe('true');
  });

  it('206 with exact Content-Range for bounded, open and suffix ranges, same ETag as HEAD', async () => {
    const head = await fetch(`${base}/small.csv`, { method: 'HEAD' });
    const etag = head.headers.get('etag');
    for (const [range, from, to] of [['bytes=2-5', 2, 5], ['bytes=30-', 30, 35], ['bytes=-4', 32, 35]] as const) {
      const res = await fetch(`${base}/small.csv`, { headers: { Range: range } });
      expect(res.status).toBe(206);
      expect(res.headers.get('content-range')).toBe(`bytes ${from}-${to}/${small.length}`);
      expect(res.headers.get('etag')).toBe(etag);
      expect(Buffer.from(await res.arrayBuffer()).equals(small.subarray(from, to + 1))).toBe(true);
    }
  });

  it('416 with bytes */total for a range past the end', async () => {
    const res = await fetch(`${base}/small.csv`, { headers: { Range: 'bytes=100-' } });
    expect(res.status).toBe(416);
    expect(res.headers.get('content-range')).toBe(`bytes */${small.length}`);
  });

  it('HEAD carries the GET headers and no body', async () => {
    const res = await fetch(`${base}/large.parquet`, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe(String(large.length));
    expect(res.headers.get('content-type')).toBe('application/vnd.apache.parquet');
    expect((await res.arrayBuffer()).byteLength).toBe(0);
  });

  it('304 for a matching If-None-Match, and 200 when If-Range is stale', async () => {
    const etag = (await fetch(`${base}/small.csv`, { method: 'HEAD' })).headers.get('etag')!;
    expect((await fetch(`${base}/small.csv`, { headers: { 'If-None-Match': etag } })).status).toBe(304);
    const stale = await fetch(`${base}/small.csv`, { headers: { Range: 'bytes=0-1', 'If-Range': '"old"' } });
    expect(stale.status).toBe(200);
    await stale.arrayBuffer();
  });

  it('412 for a stale If-Match with a Range, 304 for an If-Modified-Since after the last change', async () => {
    const head = await fetch(`${base}/small.csv`, { method: 'HEAD' });
    const stale = await fetch(`${base}/small.csv`, { headers: { Range: 'bytes=0-1', 'If-Match': '"old"' } });
    expect(stale.status).toBe(412);
    const current = await fetch(`${base}/small.csv`, { headers: { Range: 'bytes=0-1', 'If-Match': head.headers.get('etag')! } });
    expect(current.status).toBe(206);
    await current.arrayBuffer();
    const later = new Date(Date.parse(head.headers.get('last-modified')!) + 86_400_000).toUTCString();
    expect((await fetch(`${base}/small.csv`, { headers: { 'If-Modified-Since': later } })).status).toBe(304);
    const earlier = new Date(Date.parse(head.headers.get('last-modified')!) - 86_400_000).toUTCString();
    const changed = await fetch(`${base}/small.csv`, { headers: { 'If-Modified-Since': earlier } });
    expect(changed.status).toBe(200);
    await changed.arrayBuffer();
  });

  it('reports a download the client aborts as incomplete', async () => {
    outcomes.length = 0;
    await new Promise<void>((resolve) => {
      const req = request(`${base}/large.parquet`, (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.end();
    });
    while (outcomes.length === 0) await new Promise((r) => setTimeout(r, 20));
    const outcome = outcomes[0]!;
    expect(outcome.status).toBe(200);
    expect(outcome.status !== 404 && outcome.complete).toBe(false);
  });

  it('404 outcome for a missing key', async () => {
    expect((await fetch(`${base}/missing.csv`)).status).toBe(404);
  });
});

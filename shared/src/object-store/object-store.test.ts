import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { text } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestBucket, type TestBucket } from '@uda/test-support/s3';
import { LocalFolderStore } from './local.ts';
import type { ObjectStore } from './types.ts';

/** The same contract for both adapters: what one does, the other must do. */
function contract(name: string, open: () => Promise<{ store: ObjectStore; close(): Promise<void> }>) {
  describe(name, () => {
    let store: ObjectStore;
    let close: () => Promise<void>;
    let dir: string;

    beforeAll(async () => {
      ({ store, close } = await open());
      dir = await mkdtemp(join(tmpdir(), 'uda-os-'));
    });
    afterAll(async () => {
      await close();
      await rm(dir, { recursive: true, force: true });
    });

    it('stores bytes and reads them back whole and by range', async () => {
      const info = await store.putBytes('a/b/hello.txt', 'hello, object store');
      expect(info.size).toBe(19);
      expect(info.etag).toMatch(/^"[^"]+"$/);
      const whole = await store.get('a/b/hello.txt');
      expect(await text(whole!.body)).toBe('hello, object store');
      const part = await store.get('a/b/hello.txt', { start: 7, end: 12 });
      expect(await text(part!.body)).toBe('object');
      expect(part!.size).toBe(19);
    });

    it('uploads a file larger than one part, keeping every byte', async () => {
      const path = join(dir, 'big.bin');
      const bytes = Buffer.alloc(11 * 1024 * 1024);
      for (let i = 0; i < bytes.length; i += 4096) bytes[i] = (i / 4096) % 251;
      await writeFile(path, bytes);
      const info = await store.putFile('big/big.bin', path);
      expect(info.size).toBe(bytes.length);
      const tail = await store.get('big/big.bin', { start: bytes.length - 8192, end: bytes.length - 1 });
      const got = Buffer.concat(await tail!.body.toArray());
      expect(got.equals(bytes.subarray(bytes.length - 8192))).toBe(true);
    });

    it('answers undefined for a missing object, lists by prefix and deletes', async () => {
      expect(await store.head('nope/missing')).toBeUndefined();
      expect(await store.get('nope/missing')).toBeUndefined();
      await store.putBytes('list/x/1', '1');
      await store.putBytes('list/x/2', '22');
      await store.putBytes('list/y/3', '333');
      expect((await store.list('list/x/')).map((o) => o.key)).toEqual(['list/x/1', 'list/x/2']);
      await store.delete(['list/x/1', 'list/x/2']);
      expect(await store.list('list/x/')).toEqual([]);
      expect((await store.list('list/')).map((o) => o.key)).toEqual(['list/y/3']);
    });

    it('keeps the ETag stable between HEAD and GET', async () => {
      const put = await store.putBytes('etag/one', 'same bytes');
      const head = await store.head('etag/one');
      const get = await store.get('etag/one', { start: 0, end: 3 });
      get!.body.resume();
      expect(head!.etag).toBe(put.etag);
      expect(get!.etag).toBe(put.etag);
    });
  });
}

contract('LocalFolderStore', async () => {
  const root = await mkdtemp(join(tmpdir(), 'uda-local-store-'));
  return { store: new LocalFolderStore(root), close: () => rm(root, { recursive: true, force: true }) };
});

contract('S3Store on the S3-compatible server', async () => {
  const bucket: TestBucket = await createTestBucket('os');
  return { store: bucket.store, close: () => bucket.remove() };
});

describe('LocalFolderStore keys', () => {
  it('refuses a key that would leave its folder', async () => {
    const store = new LocalFolderStore(join(tmpdir(), 'uda-escape'));
    await expect(store.putBytes('../outside', 'x')).rejects.toThrow('invalid object key');
  });
});

/**
 * The open-sheet cache over real DuckDB instances: a sheet is opened once per key, the least
 * recently used sheets are closed past the byte bound, one in use is closed only when its search
 * ends, and a sheet over the bound (or any sheet with a bound of 0) serves its search and closes.
 */
import { describe, expect, it } from '@jest/globals';
import { DuckDBInstance } from '@duckdb/node-api';
import { createSheetCache, type OpenSheet } from './sheet-cache.ts';

async function opened(bytes: number, log: DuckDBInstance[]): Promise<OpenSheet<string>> {
  const instance = await DuckDBInstance.create(':memory:');
  log.push(instance);
  return { instance, prepared: 'sheet', bytes };
}

async function isOpen(instance: DuckDBInstance): Promise<boolean> {
  try {
    (await instance.connect()).closeSync();
    return true;
  } catch {
    return false;
  }
}

const answer = async (sheet: OpenSheet<string>) => {
  const connection = await sheet.instance.connect();
  try {
    return (await connection.runAndReadAll('SELECT 42')).getRows()[0]![0];
  } finally {
    connection.closeSync();
  }
};

describe('createSheetCache', () => {
  it('opens a key once and keeps it while it fits', async () => {
    const cache = createSheetCache<string>(100);
    const log: DuckDBInstance[] = [];
    expect(await cache.use('a', () => opened(40, log), answer)).toBe(42);
    expect(await cache.use('a', () => opened(40, log), answer)).toBe(42);
    expect(log).toHaveLength(1);
    expect(cache.bytes).toBe(40);
    cache.clear();
    expect(await isOpen(log[0]!)).toBe(false);
    expect(cache.bytes).toBe(0);
  });

  it('closes the least recently used sheets past the bound', async () => {
    const cache = createSheetCache<string>(100);
    const log: DuckDBInstance[] = [];
    await cache.use('a', () => opened(40, log), answer);
    await cache.use('b', () => opened(40, log), answer);
    await cache.use('a', () => opened(40, log), answer);
    await cache.use('c', () => opened(40, log), answer);
    expect(log).toHaveLength(3);
    expect(await Promise.all(log.map(isOpen))).toEqual([true, false, true]);
    expect(cache.bytes).toBe(80);
    cache.clear();
  });

  it('closes a sheet evicted during its search when that search ends', async () => {
    const cache = createSheetCache<string>(50);
    const log: DuckDBInstance[] = [];
    let stillOpen: boolean | undefined;
    await cache.use('a', () => opened(40, log), async (sheet) => {
      await cache.use('b', () => opened(40, log), answer);
      stillOpen = await isOpen(sheet.instance);
      return answer(sheet);
    });
    expect(stillOpen).toBe(true);
    expect(await isOpen(log[0]!)).toBe(false);
    expect(await isOpen(log[1]!)).toBe(true);
    cache.clear();
  });

  it('serves a sheet over the bound, or with a bound of 0, and closes it', async () => {
    for (const [bound, size] of [[100, 101], [0, 1]] as const) {
      const cache = createSheetCache<string>(bound);
      const log: DuckDBInstance[] = [];
      expect(await cache.use('a', () => opened(size, log), answer)).toBe(42);
      expect(await isOpen(log[0]!)).toBe(false);
      expect(cache.bytes).toBe(0);
    }
  });
});

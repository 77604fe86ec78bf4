/**
 * The page cache keeps response bodies by key within its bytes, dropping the least recently used
 * first, and keeps nothing at 0 bytes; the key folds case, accents and punctuation (the terms) and
 * separates versions, sources and limits.
 */
import { describe, expect, it } from '@jest/globals';
import { parseQuery } from '@uda/search/query';
import { createPageCache, pageCacheKey } from './page-cache.ts';

const body = (text: string) => Buffer.from(text);
const request = { source: 'gutenberg', keywords: 'The Art of War!', limit: 10 } as const;

describe('the lookup page cache', () => {
  it('keys by version, source, limit and the terms in order', () => {
    const key = pageCacheKey('v1', request, parseQuery(request.keywords));
    expect(pageCacheKey('v1', { ...request, keywords: 'the art of  WAR' }, parseQuery('the art of  WAR'))).toBe(key);
    expect(pageCacheKey('v2', request, parseQuery(request.keywords))).not.toBe(key);
    expect(pageCacheKey('v1', { ...request, limit: 5 }, parseQuery(request.keywords))).not.toBe(key);
    expect(pageCacheKey('v1', { ...request, source: 'census' }, parseQuery(request.keywords))).not.toBe(key);
    expect(pageCacheKey('v1', request, parseQuery('war of the art'))).not.toBe(key);
  });

  it('keeps bodies within its bytes, the least recently used leaving first', () => {
    const cache = createPageCache(3 * (2 + 100));
    cache.set('a', body('x'.repeat(100)));
    cache.set('b', body('y'.repeat(100)));
    cache.set('c', body('z'.repeat(100)));
    expect(cache.get('a')?.length).toBe(100);
    cache.set('d', body('w'.repeat(100)));
    expect(cache.get('b')).toBeUndefined();
    expect(['a', 'c', 'd'].map((k) => cache.get(k)?.length)).toEqual([100, 100, 100]);
    expect(cache.bytes).toBeLessThanOrEqual(3 * (2 + 100));
  });

  it('keeps nothing at 0 bytes, nor a body larger than the whole cache', () => {
    const off = createPageCache(0);
    off.set('a', body('x'));
    expect(off.get('a')).toBeUndefined();
    const small = createPageCache(10);
    small.set('a', body('x'.repeat(50)));
    expect(small.get('a')).toBeUndefined();
    expect(small.bytes).toBe(0);
  });
});

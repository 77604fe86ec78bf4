import { describe, expect, it } from '@jest/globals';
import { decideRange, etagMatches, evaluatePreconditions, ifRangeAllowsPartial } from './range.ts';

describe('decideRange', () => {
  const size = 1000;
  it.each([
    ['bytes=0-99', { kind: 'partial', start: 0, end: 99 }],
    ['bytes=900-', { kind: 'partial', start: 900, end: 999 }],
    ['bytes=-100', { kind: 'partial', start: 900, end: 999 }],
    ['bytes=-5000', { kind: 'partial', start: 0, end: 999 }],
    ['bytes=990-2000', { kind: 'partial', start: 990, end: 999 }],
    ['bytes=999-999', { kind: 'partial', start: 999, end: 999 }],
  ])('206 for %s', (header, expected) => {
    expect(decideRange(header, size)).toEqual(expected);
  });

  it.each(['bytes=1000-', 'bytes=5000-6000', 'bytes=-0'])('416 for %s', (header) => {
    expect(decideRange(header, size)).toEqual({ kind: 'unsatisfiable' });
  });

  it.each([undefined, '', 'bytes=0-1,5-6', 'items=0-1', 'bytes=-', 'bytes=50-10', 'bytes=a-b', 'bytes= 0-1'])(
    '200 with the whole object for %p',
    (header) => {
      expect(decideRange(header, size)).toEqual({ kind: 'full' });
    },
  );

  it('416 for any range of an empty object', () => {
    expect(decideRange('bytes=0-', 0)).toEqual({ kind: 'unsatisfiable' });
    expect(decideRange('bytes=-1', 0)).toEqual({ kind: 'unsatisfiable' });
  });
});

describe('validators', () => {
  it('If-Range with our ETag allows a partial answer, anything else does not', () => {
    expect(ifRangeAllowsPartial(undefined, '"abc"')).toBe(true);
    expect(ifRangeAllowsPartial('"abc"', '"abc"')).toBe(true);
    expect(ifRangeAllowsPartial('"old"', '"abc"')).toBe(false);
    expect(ifRangeAllowsPartial('Wed, 21 Oct 2015 07:28:00 GMT', '"abc"')).toBe(false);
  });

  it('If-None-Match matches a listed tag, a weak form of it, or *', () => {
    expect(etagMatches('"x", "abc"', '"abc"')).toBe(true);
    expect(etagMatches('W/"abc"', '"abc"')).toBe(true);
    expect(etagMatches('*', '"abc"')).toBe(true);
    expect(etagMatches('"nope"', '"abc"')).toBe(false);
    expect(etagMatches(undefined, '"abc"')).toBe(false);
  });
});

describe('preconditions (RFC 9110 §13.2.2)', () => {
  const etag = '"abc"';
  const modified = new Date('2026-01-02T03:04:05.678Z');
  const before = 'Thu, 01 Jan 2026 00:00:00 GMT';
  const same = modified.toUTCString();
  const later = 'Sat, 03 Jan 2026 00:00:00 GMT';

  it('fails If-Match with another tag, a weak tag or an If-Unmodified-Since before the change', () => {
    expect(evaluatePreconditions({ ifMatch: '"old"' }, etag, modified)).toBe('failed');
    expect(evaluatePreconditions({ ifMatch: 'W/"abc"' }, etag, modified)).toBe('failed');
    expect(evaluatePreconditions({ ifUnmodifiedSince: before }, etag, modified)).toBe('failed');
  });

  it('proceeds for a matching If-Match, *, or an If-Unmodified-Since at or after the change', () => {
    expect(evaluatePreconditions({ ifMatch: '"x", "abc"' }, etag, modified)).toBe('proceed');
    expect(evaluatePreconditions({ ifMatch: '*' }, etag, modified)).toBe('proceed');
    expect(evaluatePreconditions({ ifUnmodifiedSince: same }, etag, modified)).toBe('proceed');
  });

  it('answers not-modified for If-Modified-Since at or after the change, and proceeds before it', () => {
    expect(evaluatePreconditions({ ifModifiedSince: later }, etag, modified)).toBe('not-modified');
    expect(evaluatePreconditions({ ifModifiedSince: same }, etag, modified)).toBe('not-modified');
    expect(evaluatePreconditions({ ifModifiedSince: before }, etag, modified)).toBe('proceed');
    expect(evaluatePreconditions({ ifModifiedSince: 'yesterday' }, etag, modified)).toBe('proceed');
  });

  it('lets If-None-Match decide over If-Modified-Since, and If-Match over If-Unmodified-Since', () => {
    expect(evaluatePreconditions({ ifNoneMatch: '"other"', ifModifiedSince: later }, etag, modified)).toBe('proceed');
    expect(evaluatePreconditions({ ifMatch: etag, ifUnmodifiedSince: before }, etag, modified)).toBe('proceed');
  });
});

import { describe, expect, it } from '@jest/globals';
import { decideRange, etagMatches, ifRangeAllowsPartial } from './range.ts';

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

  it.each([undefined, '', 'bytes=0-1,5-6', 'items=0-1', 'bytes=-', 'bytes=50-10', 'bytes=a-b'])(
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

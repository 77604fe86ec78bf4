import { describe, expect, it } from '@jest/globals';
import { ApiError } from '../errors/api-error.ts';
import { lookupQuery } from './schema.ts';
import { checkKeywords, decodeKeywords } from './input.ts';

const rejection = (work: () => unknown): string => {
  try {
    work();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(400);
    return (error as ApiError).message;
  }
  throw new Error('expected a 400');
};

describe('decodeKeywords', () => {
  it('decodes percent-encoded UTF-8 and trims, keeping + and other punctuation literally', () => {
    expect(decodeKeywords('%20Do%C3%B1a%20Ana%20')).toBe('Doña Ana');
    expect(decodeKeywords('c++')).toBe('c++');
  });

  it('rejects bad encoding, control characters, blanks and text over 200 characters', () => {
    expect(rejection(() => decodeKeywords('%E0%A4%A'))).toMatch(/URL-encoded UTF-8/);
    expect(rejection(() => decodeKeywords('%ED%A0%80'))).toMatch(/URL-encoded UTF-8/);
    expect(rejection(() => decodeKeywords('a%09b'))).toMatch(/control characters/);
    expect(rejection(() => decodeKeywords('a%C2%85b'))).toMatch(/control characters/);
    expect(rejection(() => decodeKeywords('%20'))).toMatch(/empty/);
    expect(decodeKeywords('é'.repeat(200))).toHaveLength(200);
    expect(rejection(() => decodeKeywords('é'.repeat(201)))).toMatch(/200 characters/);
  });
});

describe('checkKeywords', () => {
  it('rejects lone surrogates that JSON strings (MCP) can carry', () => {
    expect(rejection(() => checkKeywords('abc\uD800'))).toMatch(/valid UTF-8/);
  });
});

describe('?limit= (the lookup routes\' query schema)', () => {
  const limitOf = (limit: unknown) => lookupQuery.parse(limit === undefined ? {} : { limit }).limit;

  it('defaults to 10 and accepts whole numbers from 1 to 50, as numbers', () => {
    expect(limitOf(undefined)).toBe(10);
    expect(limitOf('1')).toBe(1);
    expect(limitOf('50')).toBe(50);
  });

  it('rejects anything else, repeated parameters included', () => {
    for (const bad of ['0', '51', '', 'x', '2.5', '-3', ['1', '2']]) expect(lookupQuery.safeParse({ limit: bad }).error?.issues[0]?.message).toMatch(/from 1 to 50/);
  });
});

import { describe, it, expect } from '@jest/globals';
import { queryResponseSchema, rowSchema } from './runner-contract.ts';

describe('runner contract rows', () => {
  it('keeps columns named __proto__ and constructor through parsing', () => {
    const body = JSON.parse('{"__proto__":1,"constructor":2,"a":3}') as unknown;
    const row = rowSchema.parse(body);
    expect(Object.keys(row)).toEqual(['__proto__', 'constructor', 'a']);
    expect(JSON.stringify(row)).toBe('{"__proto__":1,"constructor":2,"a":3}');
  });

  it('refuses a row that is not an object', () => {
    expect(rowSchema.safeParse([1]).success).toBe(false);
    expect(rowSchema.safeParse(null).success).toBe(false);
    expect(queryResponseSchema.shape.rows.safeParse(['x']).success).toBe(false);
  });
});

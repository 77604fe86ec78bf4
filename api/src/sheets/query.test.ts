import { describe, expect, it } from '@jest/globals';
import { sheetQueryId } from './query.ts';

describe('sheetQueryId', () => {
  const row = { id: '0b6e9c1e-5f4a-4c1b-9d9e-1f2a3b4c5d6e', version: 1 };
  it('is a stable UUID for the same account, sheet version and SQL', () => {
    expect(sheetQueryId('acc', row, 'SELECT 1')).toBe(sheetQueryId('acc', row, 'SELECT 1'));
    expect(sheetQueryId('acc', row, 'SELECT 1')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
  it('changes with the sheet version (a re-upload), the SQL and the account', () => {
    const ids = new Set([
      sheetQueryId('acc', row, 'SELECT 1'),
      sheetQueryId('acc', { ...row, version: 2 }, 'SELECT 1'),
      sheetQueryId('acc', row, 'SELECT 2'),
      sheetQueryId('other', row, 'SELECT 1'),
    ]);
    expect(ids.size).toBe(4);
  });
});

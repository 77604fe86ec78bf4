import { describe, expect, it } from '@jest/globals';
import { queryIdOf, uuidV5 } from './query-id.ts';

const base = { accountId: 'a1', sql: 'SELECT 1', datasets: [], exportVersion: 'v1' };

describe('queryIdOf', () => {
  it('is a UUIDv5 that matches the RFC test vector for the DNS namespace', () => {
    // RFC 9562 appendix A.4: www.example.com in the DNS namespace.
    expect(uuidV5('www.example.com', '6ba7b810-9dad-11d1-80b4-00c04fd430c8')).toBe('2ed6657d-e927-568b-95e1-2665a8aea6a2');
  });

  it('is stable for equal inputs and ignores the order of dataset ids', () => {
    const a = queryIdOf({ ...base, datasets: [{ id: 'x', version: '1' }, { id: 'y', version: '2' }] });
    const b = queryIdOf({ ...base, datasets: [{ id: 'y', version: '2' }, { id: 'x', version: '1' }] });
    expect(a).toBe(b);
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('changes with the account, the exact SQL text, a dataset version and the export version', () => {
    const id = queryIdOf(base);
    expect(queryIdOf({ ...base, accountId: 'a2' })).not.toBe(id);
    expect(queryIdOf({ ...base, sql: 'SELECT  1' })).not.toBe(id);
    expect(queryIdOf({ ...base, exportVersion: 'v2' })).not.toBe(id);
    expect(queryIdOf({ ...base, datasets: [{ id: 'x', version: '1' }] })).not.toBe(queryIdOf({ ...base, datasets: [{ id: 'x', version: '2' }] }));
  });
});

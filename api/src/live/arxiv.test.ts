import { describe, expect, it } from '@jest/globals';
import { arxivSearchQuery } from './arxiv.ts';

describe('arXiv search_query', () => {
  it('joins each keyword as all:word with AND', () => {
    expect(arxivSearchQuery('quantum  error correction')).toBe('all:quantum AND all:error AND all:correction');
  });

  it('drops query syntax so keywords cannot change the query structure', () => {
    expect(arxivSearchQuery('ti:"x" OR (y)')).toBe('all:ti AND all:x AND all:y');
  });
});

import { describe, expect, it } from '@jest/globals';
import { boundedEditDistance, nearMatches, normalizePypiName } from './pypi-names.ts';

describe('PEP 503 names', () => {
  it.each([
    ['Django', 'django'],
    ['zope.interface', 'zope-interface'],
    ['Foo__Bar-.baz', 'foo-bar-baz'],
    [' six ', 'six'],
  ])('%s normalises to %s', (name, expected) => {
    expect(normalizePypiName(name)).toBe(expected);
  });
});

describe('near matches', () => {
  const names = ['six', 'sixer', 'django-six', 'pysix', 'requests', 'request', 'requests-oauthlib', 'reqeusts'];

  it('rank prefix matches before substring matches, shorter first, and leave out the exact name', () => {
    expect(nearMatches('six', names, 5)).toEqual(['sixer', 'pysix', 'django-six']);
  });

  it('find typos within the edit distance', () => {
    expect(nearMatches('requsets', names, 5)).toEqual(['reqeusts', 'requests']);
  });

  it('stop at the requested count', () => {
    expect(nearMatches('requests', names, 1)).toEqual(['requests-oauthlib']);
  });

  it('edit distance gives up beyond the bound', () => {
    expect(boundedEditDistance('kitten', 'sitting', 3)).toBe(3);
    expect(boundedEditDistance('kitten', 'sitting', 2)).toBe(3);
  });
});

import { describe, expect, it } from '@jest/globals';
import { parseWikipediaUrl } from './wikipedia.ts';

describe('Wikipedia article URLs', () => {
  it.each([
    ['https://en.wikipedia.org/wiki/Ayrton_Senna', { lang: 'en', title: 'Ayrton Senna' }],
    ['https://de.m.wikipedia.org/wiki/M%C3%BCnchen', { lang: 'de', title: 'München' }],
    ['https://en.wikipedia.org/wiki/AC/DC', { lang: 'en', title: 'AC/DC' }],
    ['https://zh-yue.wikipedia.org/wiki/香港', { lang: 'zh-yue', title: '香港' }],
  ])('%s is accepted', (input, expected) => {
    expect(parseWikipediaUrl(input)).toEqual(expected);
  });

  it.each([
    'http://en.wikipedia.org/wiki/Ayrton_Senna',
    'https://en.wikipedia.org.evil.example/wiki/X',
    'https://evil.example/wiki/X',
    'https://en.wikipedia.org@evil.example/wiki/X',
    'https://user@en.wikipedia.org/wiki/X',
    'https://en.wikipedia.org:8443/wiki/X',
    'https://en.wikipedia.org/w/index.php?title=X',
    'https://en.wikipedia.org/wiki/',
    'https://en.wikipedia.org/wiki/%E0%A4%A',
    'https://en.wikipedia.org/wiki/A%0Ab',
    'https://en.wikipedia.org/wiki/' + 'x'.repeat(256),
    'not a url',
  ])('%s is refused', (input) => {
    expect(parseWikipediaUrl(input)).toBeNull();
  });
});

/**
 * Seeded random lookups over an index's own vocabulary, for the ranking's differential tests: words
 * and prefixes of its terms (one or two letters match whole terms only), leading words of titles
 * (the exact and prefix tiers), letter case and accents, words no document has, and ten-word queries.
 */
import { textAt, textCount, type SourceIndex } from '@uda/search/index';

export function randomQuery(index: SourceIndex, titles: readonly string[], random: () => number): string {
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
  const term = () => textAt(index.terms, Math.floor(random() * textCount(index.terms)));
  const title = () => pick(titles);
  const words = (text: string) => text.split(' ').slice(0, 1 + Math.floor(random() * 4)).join(' ');
  const shapes = [
    () => term(),
    () => term().slice(0, 1 + Math.floor(random() * 4)),
    () => `${term()} ${term()}`,
    () => `${term().slice(0, 3)} ${term()} ${term().slice(0, 2)}`,
    () => title(),
    () => words(title()),
    () => `${words(title())} ${term().slice(0, 3)}`,
    () => title().toUpperCase().replaceAll('a', 'á'),
    () => `${term()} qqqzzz`,
    () => Array.from({ length: 10 }, term).join(' '),
  ];
  return pick(shapes)();
}

/** A word with one letter dropped, doubled or swapped, or two words run together: the forgiving rules' readings. */
export function mistyped(text: string, random: () => number): string {
  const at = Math.floor(random() * Math.max(1, text.length - 1));
  const edits = [
    () => text.slice(0, at) + text.slice(at + 1),
    () => text.slice(0, at) + text[at]! + text.slice(at),
    () => text.slice(0, at) + (text[at + 1] ?? '') + text[at]! + text.slice(at + 2),
    () => text.replace(' ', ''),
  ];
  return edits[Math.floor(random() * edits.length)]!();
}

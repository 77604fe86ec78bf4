/**
 * The word lists tried in turn when no document holds every word: the words without their stop
 * words ("procter and gamble" is `procter gamble`), then dropping from the last one back
 * (Meilisearch's `words` rule), never down to stop words alone.
 */
import { isStopWord } from './terms.ts';

export function fewerWords(words: readonly string[]): string[][] {
  const content = words.filter((word) => !isStopWord(word));
  if (content.length === 0) return [];
  const lists = content.length < words.length ? [content] : [];
  for (let kept = words.length - 1; kept > 0; kept--) {
    const fewer = words.slice(0, kept);
    if (!fewer.every(isStopWord)) lists.push(fewer);
  }
  return lists;
}

import type { StoredLookupSource } from '@uda/search/index';

/**
 * The CPU benches' queries: exact titles, rare and common words (short and long posting lists),
 * then a few of each other kind of `lookup-scaling.ts`'s mix: the typos and splits cost the most,
 * so they make the latency's tail.
 */
export const LOOKUP_CPU_QUERIES: readonly [StoredLookupSource, string][] = [
  ['gutenberg', 'the art of war'], ['gutenberg', 'war'], ['gutenberg', 'history'],
  ['census', 'doña ana'], ['census', 'county'],
  ['food', 'butter'], ['food', 'cheese raw'], ['food', 'babyfood'],
  ['pwc', 'attention'], ['pwc', 'learning'],
  ['sec', 'tsla'], ['sec', 'bank'],
  ['gutenberg', 'histories'], ['food', 'eggs'], ['census', 'counties'], ['pwc', 'images segmentations'],
  ['gutenberg', 'frankenstien'], ['food', 'chiken breast'], ['census', 'californa'], ['pwc', 'segmantaton'], ['sec', 'berkshre hathway'],
  ['gutenberg', 'mobydick'], ['food', 'peanutbutter'], ['pwc', 'fewshot'], ['sec', 'cocacola'], ['sec', 'wal mart'],
];

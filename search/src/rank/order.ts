/**
 * The order of the ranking rules, best first (`docs/guide.md` states them in this order):
 *   1. fewer typos (a word's typos are those of the closest form the document holds);
 *   2. the tier (`tier.ts`);
 *   3. fewer words matched only outside the primary fields: for FoodData Central the primary field
 *      is the food itself, the description's head before its first comma, so "2% milk" finds
 *      "Milk, reduced fat, fluid, 2% milkfat" before puddings "prepared with 2% milk";
 *   4. fewer words matched only by stem (the exact form first);
 *   5. BM25 (`bm25.ts`);
 *   6. `doc`, the source's tie order.
 */

export interface RankedDoc {
  readonly doc: number;
  readonly typos: number;
  readonly tier: number;
  /** Words matched outside the primary fields. */
  readonly outside: number;
  /** Words matched only by stem. */
  readonly stems: number;
  readonly score: number;
}

/** Whether `a` ranks before `b`. */
export const ranksBefore = (a: RankedDoc, b: RankedDoc): boolean =>
  a.typos !== b.typos ? a.typos < b.typos
    : a.tier !== b.tier ? a.tier < b.tier
      : a.outside !== b.outside ? a.outside < b.outside
        : a.stems !== b.stems ? a.stems < b.stems
          : a.score !== b.score ? a.score > b.score : a.doc < b.doc;

/** Adds `ranked` to a sorted page of at most `limit` (≤ 50) when it belongs there. */
export function insertTop(top: RankedDoc[], ranked: RankedDoc, limit: number): void {
  if (top.length === limit && !ranksBefore(ranked, top[limit - 1]!)) return;
  let at = top.length;
  while (at > 0 && ranksBefore(ranked, top[at - 1]!)) at--;
  top.splice(at, 0, ranked);
  if (top.length > limit) top.pop();
}

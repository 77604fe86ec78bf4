/**
 * Downloads per export file name (`service.db`, `tables/gutenberg.parquet`, …), counted across
 * versions, in this pod only: the warm-up (`cache-warmer.ts`) copies the most downloaded files of a
 * new version first. Per pod is enough for an ordering: pods behind one Service see the same mix of
 * requests, and a new pod that has counted nothing yet warms in manifest order.
 */

/**
 * Names come from the manifest (the exports route counts only files it resolved), so they are a
 * few dozen; the cap keeps the map bounded even if that ever changed.
 */
export const MAX_COUNTED_NAMES = 10_000;

export class DownloadCounts {
  readonly #counts = new Map<string, number>();

  /** One more download of this file name. */
  count(name: string): void {
    const current = this.#counts.get(name);
    if (current === undefined && this.#counts.size >= MAX_COUNTED_NAMES) return;
    this.#counts.set(name, (current ?? 0) + 1);
  }

  /** Downloads counted for this file name; 0 for one never downloaded. */
  of(name: string): number {
    return this.#counts.get(name) ?? 0;
  }
}

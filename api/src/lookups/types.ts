/** Plain types of the lookup core. The `data` shape per source is documented in docs/guide.md. */
import type { Source } from '@uda/shared/catalog';
import type { STORED_SOURCES } from '@uda/shared/runner-contract';
import type { StaleNote } from '../live/lookup.ts';

export type StoredSourceId = (typeof STORED_SOURCES)[number];

/** What goes in the envelope's `data` on success. */
export interface LookupData {
  /** Canonical source id, whatever alias was asked for. */
  source: string;
  /** The keywords as searched (decoded and trimmed), or the article URL. */
  query: string;
  results: unknown[];
  /** Every match the source reports, or null when it gives no count. */
  total: number | null;
  /** Only on an answer from a stored copy, because the live source failed. */
  stale?: StaleNote;
}

export interface LookupOutcome {
  source: Source;
  data: LookupData;
  /** Billed rows: `data.results.length`. */
  rows: number;
  /** The caller's price for those rows, micro-USD (0 for anonymous callers). */
  costMicro: number;
}

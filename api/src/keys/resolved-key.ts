/** A verified key as the store and its cache hand it out (its own module: both need it). */
import type { Tier } from '@uda/shared/catalog';

export interface ResolvedKey {
  keyId: string;
  accountId: string;
  tier: Tier;
  legacy: boolean;
  /** The account's email is verified (DECISIONS §5 "Email"): SQL, exports and sheet uploads need it. */
  emailVerified: boolean;
}

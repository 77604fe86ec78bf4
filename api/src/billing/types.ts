/**
 * The plain types the billing parts pass between them. They live apart from the classes so that
 * the parts (balances, lease wallet, window charges, ledger, wallet) depend on these, not on each
 * other in a circle; \`billing.ts\`, \`ledger.ts\` and \`wallet.ts\` re-export them for their callers.
 */
import type { Tier } from '@uda/shared/catalog';
import type { TakeRider } from '../limiter/types.ts';
import type { ByteSpan } from './bytes-delivered.ts';

export interface BreakdownItem {
  readonly source: string;
  readonly rows: number;
  readonly costPerRowMicro: number;
  readonly costMicro: number;
}

/** The account's buckets in PostgreSQL (grant + top-off) and the row's `balance_version`. */
export interface Buckets {
  readonly micro: number;
  readonly version: number;
}

/** Who pays: an account at its tier. Anonymous callers are never charged and never get here. */
export interface Payer {
  readonly accountId: string;
  readonly tier: Tier;
  /** The API key that made the request, and its route: written to the usage log, never part of a decision. */
  readonly keyId?: string;
  readonly route?: string;
}

export interface ChargeSpec {
  readonly costMicro: number;
  readonly breakdown?: readonly BreakdownItem[];
  readonly queryId?: string;
  /** For tracing only: never part of a key. */
  readonly requestId?: string;
  /** Metrics label; defaults to `open`. */
  readonly priceClass?: string;
}

/** The one balance (`Billing.balance`) with the bucket each part belongs to. */
export interface BalanceReadout {
  readonly balanceMicro: number;
  readonly grantMicro: number;
  readonly topoffMicro: number;
}

/** What a response reports: `X-Credit-Cost` and `X-Credits-Remaining`. */
export interface Settlement {
  readonly chargedMicro: number;
  readonly balanceMicro: number;
}

/** A delivery a paid re-read's first Redis call began on the charge its marker names (`reread-rider.ts`). */
export interface BegunDelivery {
  readonly deliveryId: string;
  readonly balanceMicro?: number;
}

/** A paid SQL re-read's check as a rider of the request's counter call: `read` its reply (undefined: it did not run). */
export interface PaidSqlRead {
  readonly rider: TakeRider | undefined;
  read(reply: unknown): { readonly paidKey?: string; readonly begun?: BegunDelivery } | undefined;
  /** Ends a delivery `read` reported begun that no response went out under (the request failed first). */
  release(paidKey: string, begun: BegunDelivery): Promise<void>;
}

export interface WindowOptions extends ChargeSpec {
  /** False for a response that carries no bytes (a HEAD): it never holds a paid charge up. */
  readonly carriesBytes: boolean;
  /** Runs only when this request is about to create a new charge (the export daily cap); returns an undo. */
  readonly beforeCharge?: () => Promise<(() => Promise<void>) | void>;
  /**
   * This request made the window's result (a SQL run): it tries the window's first charge key
   * without reading the ledger first (`#deliverFirst`). Only for windows that never age out.
   */
  readonly madeResult?: boolean;
  /**
   * The charge key this request read from the SQL result's re-read marker (`paidSqlResult`): the
   * first look at the window takes it instead of reading the marker again. A server value only.
   */
  readonly paidKey?: string;
  /** The delivery the re-read's first call began on `paidKey`, and the balance it read (`PaidSqlRead`). */
  readonly begun?: BegunDelivery;
  /**
   * The size of the window's file (an export), whose bytes count (rule 8): a broken response then
   * reports what it delivered (`Delivery.sent`). Undefined: a response delivers all or nothing.
   */
  readonly sizeBytes?: number;
}

/** One response under a window's charge. End it exactly once; later calls do nothing. */
export interface Delivery {
  readonly settlement: Settlement;
  readonly chargeKey: string;
  /** False for a read of a paid window that carries no bytes: its end decides nothing. */
  readonly holdsCharge: boolean;
  complete(): Promise<void>;
  /** The response broke or failed: refunds under rules 2 and 8, and says what the balance is now. */
  abandon(): Promise<Settlement>;
  /** The bytes of the window's file this response has handed to its connection so far (rule 8). */
  sent(span: ByteSpan): void;
}

/** One charge spent from a wallet, written to the ledger by its pod's journal. */
export interface ChargeRecord {
  readonly key: string;
  readonly amountMicro: number;
  readonly breakdown?: readonly BreakdownItem[];
  readonly requestId?: string;
  readonly queryId?: string;
}

export interface PendingCharge extends ChargeRecord {
  readonly accountId: string;
  readonly leaseId: string;
}

/** A charge in a pod's journal (`journal.ts`): a lookup's (aggregated in the ledger) or a window's (a row of its own). */
export interface JournalEntry extends PendingCharge {
  readonly window: boolean;
  /** The API key that paid, and the route: for the usage log only. */
  readonly keyId?: string;
  readonly route?: string;
  readonly at: number;
}

/** Where an acknowledged charge is: under which ledger row (`ledgerKey`), or forgiven. */
export interface Written {
  readonly entry: JournalEntry;
  /** The aggregated row, the charge's own row under its lease, or its own row on the buckets (`late`). */
  readonly ledgerKey: string;
  readonly late: boolean;
  readonly forgiven: boolean;
}

/** A hold a lookup made in its counter call (`credit/holds.ts`). */
export interface Hold {
  readonly accountId: string;
  readonly key: string;
  /** The lease the hold was taken from: its charge is spent under it. */
  readonly leaseId: string;
  readonly heldMicro: number;
  /** The balance with the hold still in it: the balance before this request's charge. */
  readonly balanceMicro: number;
}

/** How a request asks for its hold: the rider for its counter call, then what the reply means. */
export interface HoldPlan {
  /** Undefined for a wallet in this process (`made` holds in place). */
  readonly rider: TakeRider | undefined;
  /** The hold, from the counter call's reply (undefined: no hold was made; charge the usual way). */
  made(reply: unknown): Promise<Hold | undefined>;
}

/**
 * The billing model's steps (`api/src/billing/billing.model.test.ts`): what fast-check draws, and
 * the prices and sizes the model charges.
 */
import fc from 'fast-check';

export type Step =
  | { kind: 'window'; pod: number; window: number; bytes: boolean; made: boolean }
  | { kind: 'lookup'; pod: number }
  | { kind: 'held'; pod: number; rows: number; fail: boolean }
  | { kind: 'complete'; pick: number }
  | { kind: 'break'; pick: number; from: number; length: number }
  | { kind: 'range'; pod: number; file: number; from: number; length: number }
  | { kind: 'flush'; pod: number }
  | { kind: 'expire'; pod: number }
  | { kind: 'topup' }
  | { kind: 'crash'; pod: number }
  | { kind: 'stop'; pod: number }
  | { kind: 'redisLoss' };

/** The export files' size in the model. */
export const FILE_BYTES = 1_000;
/** A window's charge (a SQL result's, an export file's). */
export const COST = 30_000;
export const LOOKUP_COST = 5_000;
/** A held lookup's rows at most, and the price of one. */
export const HELD_ROWS = 5;
export const ROW_COST = 1_000;
export const TOPUP = 40_000;
/** How long a delivery holds its charge without renewal. */
export const TTL_MS = 60_000;

export const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('window' as const), pod: fc.nat(1), window: fc.nat(4), bytes: fc.boolean(), made: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('lookup' as const), pod: fc.nat(1) }) },
  // A lookup that holds HELD_ROWS rows' cost in its counter call, then charges `rows` of them or fails.
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('held' as const), pod: fc.nat(1), rows: fc.integer({ min: 1, max: 5 }), fail: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('flush' as const), pod: fc.nat(1) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('expire' as const), pod: fc.nat(1) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('topup' as const) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('complete' as const), pick: fc.nat() }) },
  // What a broken export download delivered: `length` bytes from `from` (0: it broke before its first byte).
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('break' as const), pick: fc.nat(), from: fc.nat(FILE_BYTES - 1), length: fc.oneof(fc.constant(0), fc.nat(FILE_BYTES / 2)) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('crash' as const), pod: fc.nat(1) }) },
  // A SIGTERM: the pod's responses are cut, it drains (writes its journal) and serves nothing more.
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('stop' as const), pod: fc.nat(1) }) },
  // Redis loses every key of this schedule (what FLUSHALL or a restart without persistence does to it).
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('redisLoss' as const) }) },
  // A range download of an export file that breaks having delivered `length` bytes from `from`.
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('range' as const), pod: fc.nat(1), file: fc.nat(2), from: fc.nat(FILE_BYTES - 1), length: fc.nat(FILE_BYTES / 2) }) },
);

/** A schedule: batches of 1–3 steps that run concurrently, one batch after another. */
export const schedules = fc.array(fc.array(step, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 25 });
/** The account's starting balance: none, a window's and a bit, or plenty. */
export const startBalances = fc.constantFrom(0, COST, 2 * COST + 5_000, 1_000_000);

/**
 * How many verification and password-reset emails may be asked for (DECISIONS §4 "Email"), on the
 * shared limiter backend (Redis across pods). Each kind is bounded twice: per account or per email
 * (so nobody fills one mailbox) and per address (so one address cannot mail many mailboxes). A
 * reset counts on the email as typed (normalised), whether or not it has an account, so a 429
 * tells nothing about which emails have accounts. A refused request does not count on the budget that refused it.
 */
import type { Request } from 'express';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { ErrorCode } from '../../errors/codes.ts';
import type { LimiterBackend } from '../../limiter/types.ts';
import { clientIp } from '../../request-context.ts';
import { takeOrRefuse } from './signin-limit.ts';
import { normaliseEmail } from '../store.ts';

const HOUR_S = 60 * 60;

export const EMAIL_LIMITS = {
  /** Verification emails per account (the one sign-up sends counts). */
  verifyPerAccount: { points: 5, durationS: HOUR_S },
  /** Verification emails asked for from one address, across accounts. */
  verifyPerAddress: { points: 20, durationS: HOUR_S },
  /** Password-reset requests per email, known or not. */
  resetPerEmail: { points: 3, durationS: HOUR_S },
  /** Password-reset requests from one address, across emails. */
  resetPerAddress: { points: 10, durationS: HOUR_S },
} as const;

export class EmailLimit {
  readonly #backend: LimiterBackend;
  readonly #counters: Record<keyof typeof EMAIL_LIMITS, RateLimiterAbstract>;

  constructor(backend: LimiterBackend) {
    this.#backend = backend;
    this.#counters = {
      verifyPerAccount: backend.counter({ name: 'verify-account', ...EMAIL_LIMITS.verifyPerAccount }),
      verifyPerAddress: backend.counter({ name: 'verify-ip', ...EMAIL_LIMITS.verifyPerAddress }),
      resetPerEmail: backend.counter({ name: 'reset-email', ...EMAIL_LIMITS.resetPerEmail }),
      resetPerAddress: backend.counter({ name: 'reset-ip', ...EMAIL_LIMITS.resetPerAddress }),
    };
  }

  /** One verification email for `accountId`, asked for by `req`; throws the 429 once either budget is spent. */
  async verification(req: Request, accountId: string): Promise<void> {
    await takeOrRefuse(
      this.#backend,
      [
        { counter: this.#counters.verifyPerAddress, key: clientIp(req), refundIfOver: true },
        { counter: this.#counters.verifyPerAccount, key: accountId, refundIfOver: true },
      ],
      ErrorCode.EMAIL_RATE_LIMITED,
    );
  }

  /** One password-reset request for `email`, asked for by `req`. */
  async reset(req: Request, email: string): Promise<void> {
    await takeOrRefuse(
      this.#backend,
      [
        { counter: this.#counters.resetPerAddress, key: clientIp(req), refundIfOver: true },
        { counter: this.#counters.resetPerEmail, key: normaliseEmail(email), refundIfOver: true },
      ],
      ErrorCode.EMAIL_RATE_LIMITED,
    );
  }
}

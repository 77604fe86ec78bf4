/**
 * Sign-in and sign-up attempts, limited per IP and per email on the shared limiter backend (Redis
 * across pods), so password guessing is slow whichever of the two an attacker varies.
 */
import type { Request } from 'express';
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { ApiError } from '../errors/api-error.ts';
import { ErrorCode } from '../errors/codes.ts';
import type { LimiterBackend } from '../limiter/types.ts';
import { clientIp } from '../request-context.ts';
import { normaliseEmail } from './store.ts';

export const SIGNIN_LIMITS = {
  perIp: { points: 30, durationS: 15 * 60 },
  perEmail: { points: 5, durationS: 15 * 60 },
} as const;

export class SigninLimit {
  readonly #perIp: RateLimiterAbstract;
  readonly #perEmail: RateLimiterAbstract;

  constructor(backend: LimiterBackend) {
    this.#perIp = backend.counter({ name: 'signin-ip', ...SIGNIN_LIMITS.perIp });
    this.#perEmail = backend.counter({ name: 'signin-email', ...SIGNIN_LIMITS.perEmail });
  }

  /** Counts one attempt; throws the 429 with Retry-After once either budget is spent. */
  async consume(req: Request, email: string): Promise<void> {
    await take(this.#perIp, clientIp(req));
    await take(this.#perEmail, normaliseEmail(email));
  }
}

async function take(counter: RateLimiterAbstract, key: string): Promise<void> {
  try {
    await counter.consume(key);
  } catch (error) {
    if (!(error instanceof RateLimiterRes)) throw error;
    throw new ApiError(ErrorCode.SIGNIN_RATE_LIMITED, {}, { 'Retry-After': String(Math.ceil(error.msBeforeNext / 1000)) });
  }
}

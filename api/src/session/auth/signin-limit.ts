/**
 * Sign-in and sign-up attempts on the shared limiter backend (Redis across pods). DECISIONS §4
 * "Sign-in": limits key on (email, address) and on address, so nobody can lock out someone else.
 * Failures for one email from anywhere only slow guessing (a growing delay before the answer); they
 * never refuse the right password from an address with no recent failures. A sign-up never counts
 * against an email's sign-in, only against its address. The address is `req.ip` as the configured
 * proxy hops decide it (TRUST_PROXY_HOPS), never a header read here.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Request } from 'express';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { ApiError } from '../../errors/api-error.ts';
import { ErrorCode } from '../../errors/codes.ts';
import type { CounterTake, LimiterBackend } from '../../limiter/types.ts';
import { clientIp } from '../../request-context.ts';
import { normaliseEmail } from '../store.ts';

export const SIGNIN_LIMITS = {
  /** Failed sign-ins (any email) and sign-up attempts from one address. */
  perAddress: { points: 30, durationS: 15 * 60 },
  /** Failed sign-ins for one email from one address: past this, that address waits for that email. */
  perEmailAddress: { points: 5, durationS: 15 * 60 },
  /** Failed sign-ins for one email from anywhere: counted for the delay only, never refused. */
  perEmail: { points: 1_000_000, durationS: 15 * 60 },
  /** The delay: none for the first failures, then doubling from `firstMs` up to `maxMs`. */
  delay: { freeFailures: 5, firstMs: 250, maxMs: 8_000 },
} as const;

/** How long a sign-in for an email waits before its answer, after `failures` recent failures for it. */
export function signinDelayMs(failures: number, { freeFailures, firstMs, maxMs } = SIGNIN_LIMITS.delay): number {
  if (failures <= freeFailures) return 0;
  return Math.min(maxMs, firstMs * 2 ** Math.min(30, failures - freeFailures - 1));
}

export class SigninLimit {
  readonly #backend: LimiterBackend;
  readonly #perAddress: RateLimiterAbstract;
  readonly #perEmailAddress: RateLimiterAbstract;
  readonly #perEmail: RateLimiterAbstract;

  constructor(backend: LimiterBackend) {
    this.#backend = backend;
    this.#perAddress = backend.counter({ name: 'signin-ip', ...SIGNIN_LIMITS.perAddress });
    this.#perEmailAddress = backend.counter({ name: 'signin-email-ip', ...SIGNIN_LIMITS.perEmailAddress });
    this.#perEmail = backend.counter({ name: 'signin-email', ...SIGNIN_LIMITS.perEmail });
  }

  /** A sign-up attempt: counts against its address only. Throws the 429 once that is spent. */
  async signUp(req: Request): Promise<void> {
    await this.#take([{ counter: this.#perAddress, key: clientIp(req), refundIfOver: true }]);
  }

  /**
   * Runs one sign-in attempt: refuses (429) an address past its budget, or past its failures for
   * this email; waits the email's delay; then runs `attempt`. A failure (it throws) is counted for
   * the address, the (email, address) and the email; a success gives the attempt's counts back.
   */
  async signIn<T>(req: Request, email: string, attempt: () => Promise<T>): Promise<T> {
    const address = clientIp(req);
    const pair = `${normaliseEmail(email)}|${address}`;
    await this.#take([
      { counter: this.#perAddress, key: address, refundIfOver: true },
      { counter: this.#perEmailAddress, key: pair, refundIfOver: true },
    ]);
    const failures = (await this.#perEmail.get(normaliseEmail(email)))?.consumedPoints ?? 0;
    await sleep(signinDelayMs(failures));
    try {
      const result = await attempt();
      await Promise.all([this.#perAddress.reward(address, 1), this.#perEmailAddress.reward(pair, 1)]);
      return result;
    } catch (error) {
      // Only a wrong password is guessing; anything else gives the attempt back.
      if (error instanceof ApiError && error.code === ErrorCode.SIGNIN_FAILED) await this.#backend.take([{ counter: this.#perEmail, key: normaliseEmail(email) }]);
      else await Promise.all([this.#perAddress.reward(address, 1), this.#perEmailAddress.reward(pair, 1)]);
      throw error;
    }
  }

  async #take(takes: readonly CounterTake[]): Promise<void> {
    await takeOrRefuse(this.#backend, takes, ErrorCode.SIGNIN_RATE_LIMITED);
  }
}

/** Takes the counts, or throws `code` (a 429) with the Retry-After of the first counter that is over. */
export async function takeOrRefuse(backend: LimiterBackend, takes: readonly CounterTake[], code: ErrorCode): Promise<void> {
  const over = (await backend.take(takes)).find((r) => r.over);
  if (over) throw new ApiError(code, {}, { 'Retry-After': String(Math.max(1, Math.ceil(over.msBeforeNext / 1000))) });
}

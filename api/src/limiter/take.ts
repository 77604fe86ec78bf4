import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { CounterTake, TakeResult } from './types.ts';

/**
 * `LimiterBackend.take` on rate-limiter-flexible counters, one call each: the in-process counters,
 * and the Redis backend's insurance limiters when Redis is down. `limiterOf` picks the object that
 * counts for a take's counter.
 */
export async function takeOneByOne(
  takes: readonly CounterTake[],
  limiterOf: (counter: RateLimiterAbstract) => RateLimiterAbstract,
): Promise<TakeResult[]> {
  const results: TakeResult[] = [];
  for (const take of takes) {
    const limiter = limiterOf(take.counter);
    const result = await consumeOne(limiter, take.key);
    results.push(result);
    if (!result.over) continue;
    if (take.refundIfOver) await limiter.reward(take.key, 1);
    break;
  }
  return results;
}

async function consumeOne(limiter: RateLimiterAbstract, key: string): Promise<TakeResult> {
  try {
    const res = await limiter.consume(key);
    return { consumed: res.consumedPoints, msBeforeNext: res.msBeforeNext, over: false };
  } catch (error) {
    if (!(error instanceof RateLimiterRes)) throw error;
    return { consumed: error.consumedPoints, msBeforeNext: error.msBeforeNext, over: true };
  }
}

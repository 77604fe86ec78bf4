/**
 * The anonymous allowance for MCP tool calls (DECISIONS §4: "REST lookups and anonymous MCP tool
 * calls share the allowance"; only successes count). An MCP answer is HTTP 200 even when a tool
 * fails, so the REST middleware's "give back unless 2xx" cannot judge it: this one takes a point per
 * billed tool call up front (so concurrent requests cannot overshoot), answers the REST 429 body
 * when the allowance is spent, and gives back every point whose tool call did not succeed.
 */
import type { Request, RequestHandler } from 'express';
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { ApiError } from '../../errors/api-error.ts';
import { ErrorCode } from '../../errors/codes.ts';
import { remainingOf, resetEpochS } from '../../quota.ts';
import { callerOf } from '../../request-context.ts';

/** Tools that return data and so draw on the allowance; `list_sources` is free and static. */
export const COUNTED_TOOLS: ReadonlySet<string> = new Set(['search_service', 'run_sql']);

interface Ticket {
  taken: number;
  succeeded: number;
}

const tickets = new WeakMap<Request, Ticket>();

/** Called by a counted tool when it returns a result (not an error). */
export function markToolSuccess(req: Request): void {
  const ticket = tickets.get(req);
  if (ticket) ticket.succeeded++;
}

function countedCalls(body: unknown): number {
  const messages: unknown[] = Array.isArray(body) ? body : [body];
  return messages.filter((m) => {
    const message = m as { method?: unknown; params?: { name?: unknown } } | null;
    return message?.method === 'tools/call' && COUNTED_TOOLS.has(String(message.params?.name));
  }).length;
}

export function mcpAllowance({ counter, points }: { counter: RateLimiterAbstract; points: number }): RequestHandler {
  return async function mcpAnonymousAllowance(req, res, next) {
    const caller = callerOf(req);
    const calls = countedCalls(req.body);
    if (caller.kind !== 'anonymous' || calls === 0) return next();
    let result: RateLimiterRes;
    let rejected = false;
    try {
      result = await counter.consume(caller.ip, calls);
    } catch (error) {
      if (!(error instanceof RateLimiterRes)) throw error;
      result = error;
      rejected = true;
    }
    const headers = {
      'X-RateLimit-Limit': String(points),
      'X-RateLimit-Remaining': String(remainingOf(points, result.consumedPoints)),
      'X-RateLimit-Reset': String(resetEpochS(new Date(), result.msBeforeNext)),
    };
    res.set(headers);
    if (rejected) {
      await giveBack(counter, caller.ip, calls);
      throw new ApiError(ErrorCode.REQUEST_LIMIT_EXCEEDED, { limit: points }, headers);
    }
    const ticket: Ticket = { taken: calls, succeeded: 0 };
    tickets.set(req, ticket);
    res.once('close', () => void giveBack(counter, caller.ip, ticket.taken - ticket.succeeded));
    next();
  };
}

/** Never below zero: a window that expired meanwhile has nothing to give back. */
async function giveBack(counter: RateLimiterAbstract, key: string, points: number): Promise<void> {
  if (points <= 0) return;
  try {
    const current = await counter.get(key);
    const back = Math.min(points, current?.consumedPoints ?? 0);
    if (back > 0) await counter.reward(key, back);
  } catch {
    // The store is down: the insurance limiter holds the count; losing a reward only errs strict.
  }
}

/**
 * The anonymous allowance for MCP tool calls (DECISIONS §4: "REST lookups and anonymous MCP tool
 * calls share the allowance"; only successes count). An MCP answer is HTTP 200 even when a tool
 * fails, so the REST middleware's "give back unless 2xx" cannot judge it: this one takes a point per
 * billed tool call up front (so concurrent requests cannot overshoot), answers the REST 429 body
 * when the allowance is spent, and gives back every point whose tool call did not succeed.
 */
import type { Request, RequestHandler } from 'express';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { ApiError } from '../../errors/api-error.ts';
import { ErrorCode } from '../../errors/codes.ts';
import { giveBack, takeAllowance } from '../../middleware/anonymous-limit/index.ts';
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
    const { headers, rejected } = await takeAllowance(counter, caller.ip, { points, calls, now: new Date() });
    res.set(headers);
    if (rejected) throw new ApiError(ErrorCode.REQUEST_LIMIT_EXCEEDED, { limit: points }, headers);
    const ticket: Ticket = { taken: calls, succeeded: 0 };
    tickets.set(req, ticket);
    res.once('close', () => void giveBack(counter, caller.ip, ticket.taken - ticket.succeeded));
    next();
  };
}

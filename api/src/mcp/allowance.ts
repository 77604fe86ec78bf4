/**
 * The anonymous allowance for MCP tool calls (DECISIONS §4: "REST lookups and anonymous MCP tool
 * calls share the allowance"; only successes count). An MCP answer is HTTP 200 even when a tool
 * fails, so the REST middleware's "give back unless 2xx" cannot judge it: each counted call takes
 * its point up front (so concurrent requests cannot overshoot), and every point whose tool call did
 * not succeed is given back when the response closes.
 */
import type { Request, Response } from 'express';
import { ApiError } from '../errors/api-error.ts';
import { ErrorCode } from '../errors/codes.ts';
import { giveBack, takeAllowance } from '../middleware/anonymous-limit/index.ts';
import { callerOf } from '../request-context.ts';
import type { McpDeps } from './tool-context.ts';

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

/** Whether a JSON-RPC message is a call of a tool that draws on the allowance. */
export function isCountedCall(message: unknown): boolean {
  const m = message as { method?: unknown; params?: { name?: unknown } } | null;
  return m?.method === 'tools/call' && COUNTED_TOOLS.has(String(m.params?.name));
}

/** Takes one call's point of an anonymous caller's allowance; throws the limit's 429 when it is spent. */
export async function takeCallAllowance({ counters, limits }: Pick<McpDeps, 'counters' | 'limits'>, req: Request, res: Response): Promise<void> {
  const caller = callerOf(req);
  if (caller.kind !== 'anonymous') return;
  const points = limits.anonymous.points;
  const { headers, rejected } = await takeAllowance(counters.anonymous, caller.ip, { points, now: new Date() });
  res.set(headers);
  if (rejected) throw new ApiError(ErrorCode.REQUEST_LIMIT_EXCEEDED, { limit: points }, headers);
  let ticket = tickets.get(req);
  if (!ticket) {
    const opened: Ticket = { taken: 0, succeeded: 0 };
    tickets.set(req, opened);
    res.once('close', () => void giveBack(counters.anonymous, caller.ip, opened.taken - opened.succeeded));
    ticket = opened;
  }
  ticket.taken++;
}

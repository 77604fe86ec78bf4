/**
 * Every call counts (DECISIONS §4): each message of a JSON-RPC batch is one request to the burst
 * limit, and each `search_service`/`run_sql` call of an anonymous caller one use of the allowance
 * (the daily cap counts each query `run_sql` runs, in `runSql`). The messages are admitted in order;
 * one past a limit gets that limit's error as its own answer, and the ones before it still run.
 */
import type { Request, Response } from 'express';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { ApiError } from '../errors/api-error.ts';
import { countAnotherRequest } from '../middleware/burst-limit/index.ts';
import { applyGuards } from '../middleware/counters/index.ts';
import type { McpDeps } from './tool-context.ts';
import { isCountedCall, takeCallAllowance } from './allowance.ts';
import { limitFailure } from './tool-errors.ts';

/** The most messages one POST /mcp may carry (docs/guide.md "MCP"). */
export const MAX_BATCH_CALLS = 10;

/** JSON-RPC "Invalid Request": the batch is larger than `MAX_BATCH_CALLS`; nothing in it ran. */
export function batchTooLarge(size: number): object {
  const message = `A JSON-RPC batch holds at most ${MAX_BATCH_CALLS} messages; this one has ${size}. Send the rest in another request.`;
  return { jsonrpc: '2.0', id: null, error: { code: -32600, message } };
}

export interface Admission {
  readonly admitted: unknown[];
  /** The limit that refused each refused message, in order. */
  readonly refused: { readonly message: unknown; readonly error: ApiError }[];
}

export async function admitCalls(services: McpDeps, req: Request, res: Response, messages: readonly unknown[]): Promise<Admission> {
  const admission: Admission = { admitted: [], refused: [] };
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i];
    const error = await limitOf(services, req, res, message, i === 0);
    if (error) admission.refused.push({ message, error });
    else admission.admitted.push(message);
  }
  return admission;
}

/** The limit that refuses this message, if one does. The first message's burst count came with the request's. */
async function limitOf(services: McpDeps, req: Request, res: Response, message: unknown, first: boolean): Promise<ApiError | undefined> {
  try {
    if (!first) {
      countAnotherRequest(req);
      await applyGuards(services.limiterBackend, [services.guards.burst], req, res);
    }
    if (isCountedCall(message)) await takeCallAllowance(services, req, res);
    return undefined;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
}

/**
 * The answer of a refused message: a tool call gets the limit as a failed tool result (SPEC: tool
 * failures are `isError` results), any other request a JSON-RPC error; a notification none.
 */
export function refusalAnswer(message: unknown, error: ApiError): JSONRPCMessage | undefined {
  const m = message as { id?: unknown; method?: unknown } | null;
  if (typeof m?.id !== 'string' && typeof m?.id !== 'number') return undefined;
  const failure = limitFailure(error);
  if (m.method === 'tools/call') return { jsonrpc: '2.0', id: m.id, result: failure };
  return { jsonrpc: '2.0', id: m.id, error: { code: -32000, message: failure.content[0].text } };
}

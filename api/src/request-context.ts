/**
 * Per-request facts the middleware chain establishes: who is calling and which error style the
 * matched route uses. One object per request holds them all, under a symbol only this module
 * knows, so no global type augmentation. Not a WeakMap keyed by the request: every request's entry
 * was an ephemeron the garbage collector traces specially, at thousands of requests a second.
 */
import type { Request } from 'express';
import type { Tier } from '@uda/shared/catalog';
import type { ErrorStyle } from './errors/codes.ts';

export type Caller =
  | { readonly kind: 'anonymous'; readonly ip: string }
  | {
      readonly kind: 'account';
      readonly ip: string;
      readonly accountId: string;
      readonly tier: Tier;
      readonly keyId: string;
      readonly legacy: boolean;
      readonly emailVerified: boolean;
    };

interface Context {
  /** The burst count is still to take (`middleware/burst-limit`). */
  burstPending: boolean;
  ip: string | undefined;
  caller: Caller | undefined;
  style: ErrorStyle | undefined;
  routeLabel: string | undefined;
  beforeErrorAnswer: (() => Promise<void>) | undefined;
}

const CONTEXT = Symbol('request context');

type WithContext = Request & { [CONTEXT]?: Context };

function contextOf(req: Request): Context {
  return ((req as WithContext)[CONTEXT] ??= {
    burstPending: false,
    ip: undefined,
    caller: undefined,
    style: undefined,
    routeLabel: undefined,
    beforeErrorAnswer: undefined,
  });
}

/** The context if the chain set one, without creating it. */
function existingContext(req: Request): Context | undefined {
  return (req as WithContext)[CONTEXT];
}

/** The caller's address as `trust proxy` decides it, worked out once per request. */
export function clientIp(req: Request): string {
  const context = contextOf(req);
  context.ip ??= req.ip ?? req.socket.remoteAddress ?? 'unknown';
  return context.ip;
}

export function callerOf(req: Request): Caller {
  const context = contextOf(req);
  context.caller ??= { kind: 'anonymous', ip: clientIp(req) };
  return context.caller;
}

export function setCaller(req: Request, caller: Caller): void {
  contextOf(req).caller = caller;
}

export function styleOf(req: Request): ErrorStyle {
  return existingContext(req)?.style ?? 'plain';
}

export function setStyle(req: Request, style: ErrorStyle): void {
  contextOf(req).style = style;
}

/** The matched route's template, for metric labels (bounded cardinality); undefined when none matched. */
export function routeLabelOf(req: Request): string | undefined {
  return existingContext(req)?.routeLabel;
}

export function setRouteLabel(req: Request, label: string): void {
  contextOf(req).routeLabel = label;
}

/** Marks the burst count of `req` as still to take, once more (each call of an MCP batch counts). */
export function setBurstPending(req: Request): void {
  contextOf(req).burstPending = true;
}

/** Whether the burst count was still to take; it is taken from here on. */
export function takeBurstPending(req: Request): boolean {
  const context = existingContext(req);
  if (!context?.burstPending) return false;
  context.burstPending = false;
  return true;
}

export function requestIdOf(req: Request): string {
  return String(req.res?.getHeader('x-request-id') ?? '');
}

/**
 * Work that must land before an error answer goes out, so that the client's next request already
 * sees it: the anonymous allowance gives back the count of an answer that is not a 2xx.
 */
export function setBeforeErrorAnswer(req: Request, work: () => Promise<void>): void {
  contextOf(req).beforeErrorAnswer = work;
}

export async function settleBeforeErrorAnswer(req: Request): Promise<void> {
  await existingContext(req)?.beforeErrorAnswer?.();
}

/**
 * Per-request facts the middleware chain establishes: who is calling and which error style the
 * matched route uses. Kept in one WeakMap keyed by the request, so no global type augmentation;
 * one entry per request holds them all (a WeakMap entry per fact cost a hash-table insert each,
 * and the client IP was worked out again from X-Forwarded-For on every read).
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
    };

interface Context {
  ip: string | undefined;
  caller: Caller | undefined;
  style: ErrorStyle | undefined;
  routeLabel: string | undefined;
  beforeErrorAnswer: (() => Promise<void>) | undefined;
}

const contexts = new WeakMap<Request, Context>();

function contextOf(req: Request): Context {
  let context = contexts.get(req);
  if (!context) contexts.set(req, (context = { ip: undefined, caller: undefined, style: undefined, routeLabel: undefined, beforeErrorAnswer: undefined }));
  return context;
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
  return contexts.get(req)?.style ?? 'plain';
}

export function setStyle(req: Request, style: ErrorStyle): void {
  contextOf(req).style = style;
}

/** The matched route's template, for metric labels (bounded cardinality); undefined when none matched. */
export function routeLabelOf(req: Request): string | undefined {
  return contexts.get(req)?.routeLabel;
}

export function setRouteLabel(req: Request, label: string): void {
  contextOf(req).routeLabel = label;
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
  await contexts.get(req)?.beforeErrorAnswer?.();
}

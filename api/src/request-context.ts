/**
 * Per-request facts the middleware chain establishes: who is calling and which error style the
 * matched route uses. Kept in WeakMaps keyed by the request, so no global type augmentation.
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

const callers = new WeakMap<Request, Caller>();
const styles = new WeakMap<Request, ErrorStyle>();
const routeLabels = new WeakMap<Request, string>();

export function clientIp(req: Request): string {
  return req.ip ?? req.socket.remoteAddress ?? 'unknown';
}

export function callerOf(req: Request): Caller {
  return callers.get(req) ?? { kind: 'anonymous', ip: clientIp(req) };
}

export function setCaller(req: Request, caller: Caller): void {
  callers.set(req, caller);
}

export function styleOf(req: Request): ErrorStyle {
  return styles.get(req) ?? 'plain';
}

export function setStyle(req: Request, style: ErrorStyle): void {
  styles.set(req, style);
}

/** The matched route's template, for metric labels (bounded cardinality); undefined when none matched. */
export function routeLabelOf(req: Request): string | undefined {
  return routeLabels.get(req);
}

export function setRouteLabel(req: Request, label: string): void {
  routeLabels.set(req, label);
}

export function requestIdOf(req: Request): string {
  return String(req.res?.getHeader('x-request-id') ?? '');
}

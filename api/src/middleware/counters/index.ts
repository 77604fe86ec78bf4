/**
 * Route limits as guards (one Redis round trip per request for all its limits). A guard says what one limit takes for a request (which
 * counter, which key) and what the count means (headers, a 429). `applyGuards` decides all of a
 * request's guards in one `LimiterBackend.take`, so the burst limit, the anonymous allowance and a
 * daily cap cost one Redis round trip together.
 */
import type { Request, RequestHandler, Response } from 'express';
import type { LimiterBackend, CounterTake, TakeResult, TakeRider } from '../../limiter/types.ts';

export interface GuardStep {
  readonly take: CounterTake;
  /** Sets the limit's headers; throws the limit's ApiError when the count is over. */
  apply(result: TakeResult): void;
}

/**
 * Work that rides on the request's counter call (the credit hold of a lookup, DECISIONS §3
 * "Holds"), at most one per request. `apply` gets the rider's reply (undefined when it did not
 * run) and whether a counter refused the request (then the rider held nothing).
 */
export interface RiderStep {
  readonly rider: TakeRider | undefined;
  apply(reply: unknown, refused: boolean): Promise<void>;
}

/** undefined: the limit doesn't apply to this request (another caller kind, a HEAD, already taken). */
export type CounterGuard = (req: Request, res: Response) => GuardStep | undefined;

/** A route's guard: a counter, or work riding on the counter call. */
export type RouteGuard = (req: Request, res: Response) => GuardStep | RiderStep | undefined;

/** A route handler that runs one guard; `mountPublicRoutes` lifts it into the route's combined step. */
export type GuardHandler = RequestHandler & { readonly guard: RouteGuard };

export async function applyGuards(backend: LimiterBackend, guards: readonly RouteGuard[], req: Request, res: Response): Promise<void> {
  // Plain loops: this runs on every request, and map/filter/forEach allocate a closure and an array each.
  const steps: GuardStep[] = [];
  const takes: CounterTake[] = [];
  let riding: RiderStep | undefined;
  for (const guard of guards) {
    const step = guard(req, res);
    if (step === undefined) continue;
    if ('rider' in step) {
      riding = step;
      continue;
    }
    steps.push(step);
    takes.push(step.take);
  }
  if (riding) return applyWithRider(backend, steps, takes, riding);
  if (steps.length === 0) return;
  const results = await backend.take(takes);
  // The take stopped after the first count over its limit; that step's apply throws.
  for (let i = 0; i < results.length; i++) steps[i]?.apply(results[i] as TakeResult);
}

/** The counters and the rider in one call; the rider's step first, so a refusal still hands it its reply. */
async function applyWithRider(backend: LimiterBackend, steps: GuardStep[], takes: CounterTake[], riding: RiderStep): Promise<void> {
  const { results, reply } = riding.rider ? await backend.takeWith(takes, riding.rider) : { results: takes.length ? await backend.take(takes) : [], reply: undefined };
  let refused = false;
  for (const result of results) refused ||= result.over;
  await riding.apply(reply, refused);
  for (let i = 0; i < results.length; i++) steps[i]?.apply(results[i] as TakeResult);
}

/** One middleware deciding `guards` together. */
export function combinedGuards(backend: LimiterBackend, guards: readonly RouteGuard[]): RequestHandler {
  return async function takeRouteCounters(req, res, next) {
    await applyGuards(backend, guards, req, res);
    next();
  };
}

export function guardHandler(backend: LimiterBackend, guard: RouteGuard): GuardHandler {
  return Object.assign(combinedGuards(backend, [guard]), { guard });
}

/** Splits a route's handlers into its guards and the rest, in order. */
export function liftGuards(handlers: readonly RequestHandler[]): { guards: RouteGuard[]; rest: RequestHandler[] } {
  const guards: RouteGuard[] = [];
  const rest: RequestHandler[] = [];
  for (const handler of handlers) {
    if ('guard' in handler) guards.push((handler as GuardHandler).guard);
    else rest.push(handler);
  }
  return { guards, rest };
}

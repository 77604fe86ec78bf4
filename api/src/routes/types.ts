import type { RequestHandler } from 'express';
import type { ErrorStyle } from '../errors/codes.ts';

/** One route: registered by `registerRoutes` behind the route's style tag and authentication. */
export interface RouteDef {
  readonly method: 'get' | 'post' | 'delete' | 'head' | 'put';
  /** An Express path; a RegExp when the route must read its raw, still-encoded path itself. */
  readonly path: string | RegExp;
  /** The route's template in metrics and logs; required in spirit for a RegExp path (default: `path`). */
  readonly label?: string;
  /** Body shape of shared error codes (402, 500) on this route. */
  readonly style: ErrorStyle;
  /** Accept the key as `?token=` (SPEC Authentication §2 lists the routes). */
  readonly queryToken?: boolean;
  /** Route limits, metering guards and the handler, in order. */
  readonly handlers: readonly RequestHandler[];
}

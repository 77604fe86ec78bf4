import type { RequestHandler } from 'express';
import type { z } from 'zod';
import type { ErrorCode, ErrorStyle } from '../errors/codes.ts';

/** One documented answer of a route. */
export interface ResponseDoc {
  readonly description: string;
  /** Media type → body schema; absent for an answer without a body. */
  readonly content?: Readonly<Record<string, z.ZodType>>;
  /** Response headers; optional members are sent only in some cases. */
  readonly headers?: Readonly<Record<string, z.ZodType>>;
}

/**
 * What a route accepts and answers, as zod schemas. The OpenAPI document is generated from it
 * (`api/src/openapi/document.ts`), and `validateInput` checks `params`, `query` and a JSON `body`
 * with the same schemas before the route's last handler runs.
 */
export interface RouteDoc {
  /** The OpenAPI path template, e.g. `/api/v1/datasets/{id}`. */
  readonly path: string;
  readonly operationId: string;
  readonly summary: string;
  readonly description?: string;
  readonly tag: string;
  /** `key`: a key is required; `optional`: anonymous callers are served too; `none`: no key is read. */
  readonly auth: 'key' | 'optional' | 'none';
  readonly params?: z.ZodObject;
  readonly query?: z.ZodObject;
  readonly headers?: z.ZodObject;
  readonly body?: { readonly contentType: string; readonly schema: z.ZodType; readonly description?: string };
  /** The code invalid `params`, `query` or `body` answers with (default INVALID_INPUT). */
  readonly invalidInput?: ErrorCode;
  /** How an invalid input's message is worded (default: the first issue, with its field's name unless written for it). */
  readonly describeInvalid?: (error: z.ZodError) => string;
  /** Success answers by status. */
  readonly responses: Readonly<Record<number, ResponseDoc>>;
  /** Every error code the route can answer with besides RATE_LIMITED and INTERNAL_ERROR, which all routes can. */
  readonly errors: readonly ErrorCode[];
  /** Express answers HEAD with the GET handler; document it as its own operation. */
  readonly head?: boolean;
}

interface RouteBase {
  readonly method: 'get' | 'post' | 'delete' | 'head' | 'put';
  /** An Express path; a RegExp when the route must read its raw, still-encoded path itself. */
  readonly path: string | RegExp;
  /** The route's template in metrics and logs; required in spirit for a RegExp path (default: `path`). */
  readonly label?: string;
  /** Body shape of shared error codes (402, 500) on this route. */
  readonly style: ErrorStyle;
  /** Accept the key as `?token=` (SPEC Authentication §2 lists the routes). */
  readonly queryToken?: boolean;
  /**
   * The route's handler takes the burst count itself, in its first Redis call (the SQL routes: with
   * the re-read marker, DECISIONS §3); a request that fails before it takes the count on its way out.
   */
  readonly burstInHandler?: boolean;
  /** The schemas; absent only on routes of tests and benchmarks, and pages. */
  readonly doc?: RouteDoc;
}

/** One built route (`buildRoute`), or a test or benchmark route: mounted by `mountPublicRoutes` behind the route's style tag and authentication. */
export interface RouteDef extends RouteBase {
  /** Route limits, metering guards and the handler, in order. */
  readonly handlers: readonly RequestHandler[];
}

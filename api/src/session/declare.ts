/**
 * How a session route is declared (`routes/declare.ts`, with `sessionDoc` for its schemas), and
 * what the session routes share: the codes every signed-in route can answer with, and the
 * signed-in account. Each resource declares its routes in its own
 * folder (`auth/`, `keys/`, `usage/`, `payments/`, `tables/`); `routes.ts` lists them.
 */
import type { Request } from 'express';
import type { z } from 'zod';
import { ErrorCode } from '../errors/codes.ts';
import type { RouteDoc } from '../routes/types.ts';
import { sessionOf } from './middleware.ts';

export const SESSION_ERRORS = [ErrorCode.SESSION_REQUIRED, ErrorCode.CSRF_REJECTED] as const;

/** The session routes' validation messages stand alone: the first issue's message as written. */
const firstMessage = (error: z.ZodError) => error.issues[0]?.message ?? 'Invalid request.';

interface SessionDocFields {
  readonly method: 'get' | 'post';
  /** The path below `/dashboard/api`. */
  readonly path: string;
  readonly summary: string;
  readonly status: number;
  readonly answer: z.ZodType;
  readonly errors: readonly ErrorCode[];
  readonly body?: z.ZodType;
  readonly query?: z.ZodObject;
}

/** A session route's schemas, named `dashboard<method>_<path>`; its path is below `/dashboard/api`. */
export function sessionDoc(route: SessionDocFields): RouteDoc {
  return {
    path: route.path,
    operationId: `dashboard${route.method}${route.path.replaceAll('/', '_')}`,
    summary: route.summary,
    tag: 'Dashboard',
    auth: 'none',
    ...(route.body ? { body: { contentType: 'application/json', schema: route.body } } : {}),
    ...(route.query ? { query: route.query } : {}),
    describeInvalid: firstMessage,
    responses: { [route.status]: { description: route.summary, content: { 'application/json': route.answer } } },
    errors: route.errors,
  };
}

/** The signed-in session's account. */
export const accountOf = (req: Request) => sessionOf(req).accountId;

/**
 * Input validation driven by the route declaration: the same zod schemas that describe a route's
 * path parameters, query and JSON body in the OpenAPI document refuse bad input before its handler
 * runs, with the route's error code and the first issue's message. What they parse is kept for the
 * handler (`inputOf`), so a handler never parses its input a second time.
 */
import type { Request, RequestHandler } from 'express';
import type { z } from 'zod';
import { ApiError } from '../errors/api-error.ts';
import { ErrorCode } from '../errors/codes.ts';
import type { RouteDoc } from './types.ts';

type Check = readonly [z.ZodType, (req: Request) => unknown];

/** Each request's parsed input, by the schema of the declaration that parsed it. */
const parsedInputs = new WeakMap<Request, Map<z.ZodType, unknown>>();

/**
 * The request's input as its route declaration's `schema` parsed it (coerced, defaulted,
 * transformed), typed by that schema. Asking with a schema the route did not validate is a
 * programming error, so it fails loudly (a 500) rather than handing over unchecked input.
 */
export function inputOf<S extends z.ZodType>(req: Request, schema: S): z.output<S> {
  const parsed = parsedInputs.get(req);
  if (!parsed?.has(schema)) throw new Error('inputOf: the route declaration does not validate this schema');
  return parsed.get(schema) as z.output<S>;
}

export function validateInput(path: string | RegExp, doc: RouteDoc): RequestHandler | undefined {
  const checks: Check[] = [];
  // A RegExp route reads its raw path itself; its documented parameters are not Express params.
  if (doc.params && typeof path === 'string') checks.push([doc.params, (req) => req.params]);
  if (doc.query) checks.push([doc.query, (req) => req.query]);
  // Multipart bodies are streamed by the handler; only JSON bodies are parsed before it.
  if (doc.body?.contentType === 'application/json') checks.push([doc.body.schema, (req) => req.body ?? {}]);
  if (checks.length === 0) return undefined;
  const code = doc.invalidInput ?? ErrorCode.INVALID_INPUT;
  const describe = doc.describeInvalid ?? messageOf;
  return function validateRouteInput(req, _res, next) {
    const parsedInput = new Map<z.ZodType, unknown>();
    for (const [schema, read] of checks) {
      const parsed = schema.safeParse(read(req));
      if (!parsed.success) throw new ApiError(code, { message: describe(parsed.error) });
      parsedInput.set(schema, parsed.data);
    }
    parsedInputs.set(req, parsedInput);
    next();
  };
}

/**
 * Reads a JSON body, after the route's limits (`mountPublicRoutes`): a refused request never gets
 * here, so its body is never read (on a `burstInHandler` route the burst count comes after the
 * body, which gives its query id; a body over the limit is refused without being read). Only the parser's own failures become the route's invalid
 * input (SPEC: a SQL route's 400 is `QUERY_INVALID` in the flat shape); an error raised before
 * this step, such as a limit's 429, passes by untouched, as it never enters this handler.
 */
export function readJsonBody(doc: RouteDoc | undefined, parse: RequestHandler): RequestHandler {
  const code = doc?.invalidInput ?? ErrorCode.INVALID_INPUT;
  return function readJsonRequestBody(req, res, next) {
    parse(req, res, (error?: unknown) => {
      if (error === undefined || error === null) return next();
      const status = (error as { status?: unknown }).status;
      if (typeof status !== 'number' || status < 400 || status >= 500) return next(error);
      const notJson = (error as { type?: unknown }).type === 'entity.parse.failed';
      next(new ApiError(code, { message: notJson ? 'The request body is not valid JSON.' : 'The request body could not be read.' }));
    });
  };
}

function messageOf(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'Invalid request.';
  // Messages written for a field stand alone; zod's defaults get the field's name in front.
  const custom = issue.message.endsWith('.');
  return custom || issue.path.length === 0 ? issue.message : `${issue.path.join('.')}: ${issue.message}`;
}

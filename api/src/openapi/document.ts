/**
 * The OpenAPI 3.1 document, generated from the route declarations (`routes/table.ts`) by
 * zod-openapi: paths, parameters, bodies and success answers come from each route's `doc`; every
 * error answer comes from the error vocabulary (`errors/codes.ts`, `errors/schemas.ts`).
 */
import { z } from 'zod';
import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiPathsObject, type ZodOpenApiResponsesObject } from 'zod-openapi';
import { type ErrorCode, type ErrorStyle, STATUS } from '../errors/codes.ts';
import { errorBodySchema } from '../errors/schemas.ts';
import type { RouteDoc } from '../routes/types.ts';
import { anonymousLimitHeaders, creditHeaders, dailyCapHeaders, retryAfter } from './headers.ts';

/** What the generator needs of a route declaration. */
export interface DocumentedRoute {
  readonly method: 'get' | 'post' | 'delete' | 'head' | 'put';
  readonly style: ErrorStyle;
  readonly queryToken?: boolean;
  readonly doc?: RouteDoc;
  /** Only `public` routes are documented (`routes/declare.ts`). */
  readonly visibility: 'public' | 'session' | 'internal';
  /** Set on a public route deliberately left out of the document (a page, its scripts). */
  readonly undocumented?: string;
}

export const API_VERSION = '1.0.0';

/** Every route can answer these: the burst limit runs before routing, a store that blinks is a 503, and anything unexpected is a 500. */
const ALWAYS: readonly ErrorCode[] = ['RATE_LIMITED', 'INTERNAL_ERROR', 'SERVICE_UNAVAILABLE'];

const SECURITY_SCHEMES = {
  bearer: {
    type: 'http',
    scheme: 'bearer',
    description: 'An API key (`service_…`) in `Authorization: Bearer <API_KEY>`. Preferred: query strings get logged.',
  },
  token: {
    type: 'apiKey',
    in: 'query',
    name: 'token',
    description: 'The same key as `?token=`, for clients that cannot set headers (DuckDB, spreadsheets, browsers).',
  },
} as const;

export function buildOpenApiDocument(routes: readonly DocumentedRoute[]): ReturnType<typeof createDocument> {
  const paths: ZodOpenApiPathsObject = {};
  for (const route of routes) {
    if (!route.doc || route.visibility !== 'public' || route.undocumented) continue;
    const item = (paths[route.doc.path] ??= {});
    item[route.method] = operation(route, route.doc);
    if (route.doc.head) item.head = { ...operation(route, route.doc), operationId: `${route.doc.operationId}Head`, summary: `${route.doc.summary} (headers only; runs and bills like GET)` };
  }
  return createDocument({
    openapi: '3.1.0',
    info: {
      title: 'Unified Data API',
      version: API_VERSION,
      description:
        'A read-only, metered data service over public datasets: keyword lookups in ten sources, SELECT-only SQL with ' +
        'JSON, CSV and Parquet results, bulk exports that DuckDB can range-read, connected sheets and an MCP endpoint. ' +
        'Errors are listed with their meaning and what to do in docs/errors.md.',
    },
    servers: [{ url: '/', description: 'This server' }],
    tags: [
      { name: 'Lookups', description: 'Keyword and article lookups in the ten sources.' },
      { name: 'SQL', description: 'One SELECT over every table, as JSON, CSV or Parquet.' },
      { name: 'Exports', description: 'Bulk files and one source at a time, range-readable.' },
      { name: 'Connected sheets', description: 'Your own files, queryable alone or joined with the public tables.' },
      { name: 'Account', description: 'Usage and limits.' },
      { name: 'MCP', description: 'The Model Context Protocol endpoint for AI agents.' },
      { name: 'Meta', description: 'This document.' },
    ],
    components: { securitySchemes: SECURITY_SCHEMES },
    paths,
  });
}

function operation(route: DocumentedRoute, doc: RouteDoc): ZodOpenApiOperationObject {
  const op: ZodOpenApiOperationObject = {
    operationId: doc.operationId,
    summary: doc.summary,
    tags: [doc.tag],
    security: security(route, doc),
    responses: { ...successResponses(doc), ...errorResponses(route.style, doc.errors) },
  };
  if (doc.description) op.description = doc.description;
  if (doc.params || doc.query || doc.headers) {
    op.requestParams = {
      ...(doc.params ? { path: doc.params } : {}),
      ...(doc.query ? { query: doc.query } : {}),
      ...(doc.headers ? { header: doc.headers } : {}),
    };
  }
  if (doc.body) {
    op.requestBody = { required: true, content: { [doc.body.contentType]: { schema: doc.body.schema } } };
    if (doc.body.description) op.requestBody.description = doc.body.description;
  }
  return op;
}

function security(route: DocumentedRoute, doc: RouteDoc): Record<string, string[]>[] {
  if (doc.auth === 'none') return [];
  const schemes: Record<string, string[]>[] = [{ bearer: [] }];
  if (route.queryToken) schemes.push({ token: [] });
  // An empty requirement: the route also serves callers without a key.
  if (doc.auth === 'optional') schemes.push({});
  return schemes;
}

function successResponses(doc: RouteDoc): ZodOpenApiResponsesObject {
  const out: ZodOpenApiResponsesObject = {};
  for (const [status, response] of Object.entries(doc.responses)) {
    out[status as `${1 | 2 | 3 | 4 | 5}${string}`] = {
      description: response.description,
      ...(response.headers ? { headers: z.object(response.headers) } : {}),
      ...(response.content ? { content: Object.fromEntries(Object.entries(response.content).map(([type, schema]) => [type, { schema }])) } : {}),
    };
  }
  return out;
}

/** One response per status; its body is any of the shapes of the codes with that status. */
function errorResponses(style: ErrorStyle, codes: readonly ErrorCode[]): ZodOpenApiResponsesObject {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set([...codes, ...ALWAYS])) byStatus.set(STATUS[code], [...(byStatus.get(STATUS[code]) ?? []), code]);
  const out: ZodOpenApiResponsesObject = {};
  for (const [status, group] of [...byStatus].sort(([a], [b]) => a - b)) {
    const bodies = [...new Set(group.map((code) => errorBodySchema(code, style)))];
    const body = bodies.length === 1 ? bodies[0]! : z.union(bodies);
    const content: Record<string, { schema: z.ZodType }> = { 'application/json': { schema: body } };
    if (group.includes('RATE_LIMITED')) content['text/plain'] = { schema: z.string().describe('The burst-limit message, when the client prefers text/plain.') };
    out[String(status) as `${1 | 2 | 3 | 4 | 5}${string}`] = {
      description: `${group.join(', ')}. See docs/errors.md.`,
      headers: z.object(errorHeaders(group)),
      content,
    };
  }
  return out;
}

/** The headers an error answer carries, by code (SPEC "429 kinds", "Data source codes"; DECISIONS §4). */
function errorHeaders(codes: readonly ErrorCode[]): Record<string, z.ZodType> {
  const headers: Record<string, z.ZodType> = {};
  const optional = (set: Record<string, z.ZodType>) => Object.fromEntries(Object.entries(set).map(([name, schema]) => [name, schema.optional()]));
  for (const code of codes) {
    if (code === 'INSUFFICIENT_CREDIT') Object.assign(headers, creditHeaders);
    if (code === 'REQUEST_LIMIT_EXCEEDED') Object.assign(headers, anonymousLimitHeaders);
    if (code === 'RATE_LIMITED' || code === 'EXPORT_LIMIT_EXCEEDED' || code === 'SHEET_LIMIT_EXCEEDED') Object.assign(headers, dailyCapHeaders, retryAfter);
    if (code === 'RUNNER_BUDGET_EXCEEDED' || code === 'QUERY_CONCURRENCY_LIMITED') Object.assign(headers, retryAfter);
    if (code === 'QUERY_BUSY' || code === 'QUERY_BACKEND_UNAVAILABLE' || code === 'EXPORT_UNAVAILABLE' || code === 'UPSTREAM_RATE_LIMITED' || code === 'SOURCE_UNAVAILABLE' || code === 'SERVICE_UNAVAILABLE') {
      Object.assign(headers, optional(retryAfter));
    }
    if (code === 'METHOD_NOT_ALLOWED') headers.Allow = z.literal('POST');
  }
  // One status can hold codes with and without a header (429: burst vs anonymous): only headers every code sends are required.
  if (codes.length > 1) return optional(headers);
  return headers;
}

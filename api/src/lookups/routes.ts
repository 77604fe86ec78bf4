import { z } from 'zod';
import { sourceNames } from '@uda/shared/catalog';
import { ErrorCode } from '../errors/codes.ts';
import { MAX_KEYWORDS_CHARS } from './input.ts';
import { optionalAnonymousLimitHeaders, optionalCreditHeaders } from '../openapi/headers.ts';
import type { RouteDoc } from '../routes/types.ts';
import { type RouteDeclaration, declareRoute } from '../routes/declare.ts';
import type { LimiterBackend } from '../limiter/types.ts';
import type { Guards } from '../middleware/guards.ts';
import { holdCredit } from '../billing/index.ts';
import { ARTICLE_PATH, KEYWORD_PATH, type LookupHandlerDeps, articleLookupHandler, articleLookupMaxCost, keywordLookupHandler, keywordLookupMaxCost } from './handler.ts';
import { lookupEnvelope, lookupQuery } from './schema.ts';

const LOOKUP_ERRORS = [
  ErrorCode.INVALID_INPUT,
  ErrorCode.INSUFFICIENT_CREDIT,
  ErrorCode.LOOKUP_NOT_FOUND,
  ErrorCode.REQUEST_LIMIT_EXCEEDED,
  ErrorCode.SOURCE_UNAVAILABLE,
  ErrorCode.QUERY_BACKEND_UNAVAILABLE,
  ErrorCode.UPSTREAM_FORBIDDEN,
  ErrorCode.UPSTREAM_BAD_RESPONSE,
  ErrorCode.UPSTREAM_RATE_LIMITED,
  ErrorCode.UPSTREAM_UNAVAILABLE,
];

const found = {
  200: {
    description: 'Results, best first; each item is one billed row. `data.stale` marks an answer from a stored copy.',
    content: { 'application/json': lookupEnvelope },
    headers: { ...optionalCreditHeaders, ...optionalAnonymousLimitHeaders },
  },
};

const BILLING =
  'Billed per result row at the source\'s price class and the caller\'s tier; errors are never billed. Without a key the ' +
  'anonymous allowance applies (50 successes per 24 hours per IP).';

const keywordDoc: RouteDoc = {
  path: '/{source}/{keywords}',
  operationId: 'lookup',
  summary: 'Keyword lookup in one source',
  description: BILLING,
  tag: 'Lookups',
  auth: 'optional',
  params: z.object({
    source: z.string().describe(`A source id or alias, any case: ${sourceNames().join(', ')}.`).meta({ examples: ['gutenberg'] }),
    keywords: z
      .string()
      .describe(`URL-encoded UTF-8 text, one path segment (encode / as %2F), not blank, at most ${MAX_KEYWORDS_CHARS} characters.`)
      .meta({ examples: ['the art of war'] }),
  }),
  query: lookupQuery,
  responses: found,
  errors: LOOKUP_ERRORS,
  head: true,
};

const articleDoc: RouteDoc = {
  path: '/https:/{wikipediaUrl}',
  operationId: 'lookupWikipediaArticle',
  summary: 'Look up an encyclopedia article by its URL',
  description: `Only \`https://{lang}.wikipedia.org/wiki/{Title}\` is accepted (also written \`/https://…\`); any other URL is a 400. ${BILLING}`,
  tag: 'Lookups',
  auth: 'optional',
  params: z.object({
    wikipediaUrl: z.string().describe('The rest of the article URL after `https:/`, e.g. `/en.wikipedia.org/wiki/Alan_Turing`.').meta({ examples: ['/en.wikipedia.org/wiki/Alan_Turing'] }),
  }),
  responses: found,
  errors: LOOKUP_ERRORS,
  head: true,
};

/** What the lookup routes use: their handlers' services, the anonymous allowance and the credit hold. */
export type LookupDeps = LookupHandlerDeps & { readonly guards: Pick<Guards, 'anonymousLimit'>; readonly limiterBackend: LimiterBackend };

/**
 * SPEC "GET /{source}/{keywords}" and "GET /https:/{wikipediaUrl}": anonymous allowance (only 2xx
 * count), up-front 402 at zero balance (with the credit hold, in the same Redis call), `token` accepted. Their paths match raw two-segment paths
 * outside `/api/` and `/mcp/`, so longer unknown paths still answer the plain 404.
 */
export const lookupRoutes: readonly RouteDeclaration<LookupDeps>[] = [
  declareRoute<LookupDeps>({
    method: 'get',
    visibility: 'public',
    path: ARTICLE_PATH,
    label: '/https:/{wikipediaUrl}',
    style: 'lookup',
    queryToken: true,
    doc: articleDoc,
    guards: (s) => [s.guards.anonymousLimit, holdCredit({ billing: s.billing, backend: s.limiterBackend, maxCostOf: articleLookupMaxCost })],
    handler: (s) => articleLookupHandler(s),
  }),
  declareRoute<LookupDeps>({
    method: 'get',
    visibility: 'public',
    path: KEYWORD_PATH,
    label: '/{source}/{keywords}',
    style: 'lookup',
    queryToken: true,
    doc: keywordDoc,
    guards: (s) => [s.guards.anonymousLimit, holdCredit({ billing: s.billing, backend: s.limiterBackend, maxCostOf: keywordLookupMaxCost })],
    handler: (s) => keywordLookupHandler(s),
  }),
];

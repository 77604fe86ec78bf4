/**
 * Express side of the data lookups: reads the raw path (so a bad percent-encoding is a clear 400 in
 * the lookup envelope, not a router error), runs the shared core, settles, answers the envelope.
 */
import type { Request, RequestHandler, Response } from 'express';
import { findSource } from '@uda/shared/catalog';
import type { Billing, Payer } from '../billing/index.ts';
import { priceMicro } from '../prices.ts';
import { DEFAULT_LIMIT, MAX_LIMIT, decodeKeywords } from './input.ts';
import { articleLookup, lookup, type LookupServices } from './lookup.ts';
import { lookupEnvelopeJson, settleLookup } from './settle.ts';
import type { LookupOutcome } from './types.ts';
import { callerOf } from '../request-context.ts';
import { sendJson } from '../routes/send-json.ts';
import { inputOf } from '../routes/validate.ts';
import { lookupEnvelope, lookupQuery } from './schema.ts';

/** `/{source}/{keywords}`: two raw path segments; a trailing slash is tolerated. */
export const KEYWORD_PATH = /^\/(?!api\/|mcp\/|https?:\/)[^/]+\/[^/]+\/?$/;
/** `/https:/{wikipediaUrl}`; clients that keep the double slash (`/https://…`) are accepted too. */
export const ARTICLE_PATH = /^\/https:\/.+/;

function segments(req: Request): [string, string] {
  const [source = '', keywords = ''] = req.path.slice(1).split('/');
  return [source, keywords];
}

/** A source name that is not valid percent-encoding is simply an unsupported name. */
function sourceName(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/** The shape is checked before the charge, so a caller is never billed for an answer we then fail to send. */
/** What the lookup routes' handlers use: the lookup's services and billing. */
export type LookupHandlerDeps = LookupServices & { readonly billing: Billing };

async function answer(services: LookupHandlerDeps, req: Request, res: Response, outcome: LookupOutcome): Promise<void> {
  lookupEnvelope.shape.data.parse(outcome.data);
  sendJson(req, res, lookupEnvelopeJson(await settleLookup(services.billing, req, res, outcome)));
}

export function keywordLookupHandler(services: LookupHandlerDeps): RequestHandler {
  return async function keywordLookup(req, res) {
    const [rawSource, rawKeywords] = segments(req);
    const request = { source: sourceName(rawSource), keywords: decodeKeywords(rawKeywords), limit: inputOf(req, lookupQuery).limit };
    const outcome = await lookup(services, callerOf(req), request);
    await answer(services, req, res, outcome);
  };
}

export function articleLookupHandler(services: LookupHandlerDeps): RequestHandler {
  return async function wikipediaArticle(req, res) {
    const rest = req.path.slice('/https:/'.length).replace(/^\/+/, '');
    const outcome = await articleLookup(services, callerOf(req), `https://${rest}`);
    await answer(services, req, res, outcome);
  };
}

/**
 * The most a keyword lookup can cost, before it runs (its hold, DECISIONS §3 "Holds"): its row
 * limit at its source's price. A limit or source the handler will refuse holds the most any lookup
 * can (the refusal releases it).
 */
export function keywordLookupMaxCost(req: Request, payer: Payer): number {
  const text = req.query.limit;
  const limit = text === undefined ? DEFAULT_LIMIT : /^\d{1,3}$/.test(String(text)) && Number(text) <= MAX_LIMIT ? Math.max(1, Number(text)) : MAX_LIMIT;
  const source = findSource(sourceName(segments(req)[0]));
  return priceMicro(source?.priceClass ?? 'encyclopedia', payer.tier, limit);
}

/** An article is one encyclopedia row. */
export function articleLookupMaxCost(_req: Request, payer: Payer): number {
  return priceMicro('encyclopedia', payer.tier, 1);
}

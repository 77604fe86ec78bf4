/**
 * Response headers the API sets, as zod objects for the route declarations (SPEC "Query result
 * headers", "Credits and metering", "429 kinds"; DECISIONS §4). Each helper returns a fresh object
 * so a route can merge the sets it answers with.
 */
import { z } from 'zod';

const usd = z.string().regex(/^\d+(\.\d+)?$/);
const integer = z.string().regex(/^\d+$/);

export const creditHeaders = {
  'X-Credit-Cost': usd.describe('USD charged for this request; `0` on a free or cached answer.'),
  'X-Credits-Remaining': usd.describe('The account balance after this request, USD.'),
};

/** On metered routes the credit headers are sent to accounts only. */
export const optionalCreditHeaders = {
  'X-Credit-Cost': creditHeaders['X-Credit-Cost'].optional(),
  'X-Credits-Remaining': creditHeaders['X-Credits-Remaining'].optional(),
};

/** SPEC "Query result headers": every 200/206 of the SQL routes. */
export const resultHeaders = {
  ...creditHeaders,
  'X-Service-Cached': z.enum(['true', 'false']).describe('`true` on an uncharged re-read within the 5-minute window.'),
  'X-Service-Query-Id': z.uuid().describe('The query id.'),
  'X-Service-Rows-Charged': integer.describe('Rows charged by this request.'),
  'X-Service-Usage': z
    .string()
    .describe('JSON text: `{rows_charged, request_cost, by_source: [{source, rows, cost_per_row, cost}]}`.'),
};

/** The per-account daily caps (export/SQL, connected sheets). */
export const dailyCapHeaders = {
  'RateLimit-Limit': integer.describe('Requests allowed in the window (the burst limit, or the UTC-day cap of an account).'),
  'RateLimit-Remaining': integer.describe('Requests left in the window.'),
  'RateLimit-Reset': integer.describe('Seconds until the window resets.'),
};

export const optionalDailyCapHeaders = {
  'RateLimit-Limit': dailyCapHeaders['RateLimit-Limit'].optional(),
  'RateLimit-Remaining': dailyCapHeaders['RateLimit-Remaining'].optional(),
  'RateLimit-Reset': dailyCapHeaders['RateLimit-Reset'].optional(),
};

/** The anonymous allowance: on anonymous lookups and their 429. */
export const anonymousLimitHeaders = {
  'X-RateLimit-Limit': integer.describe('Anonymous requests allowed per 24 hours per IP.'),
  'X-RateLimit-Remaining': integer.describe('Anonymous requests left.'),
  'X-RateLimit-Reset': integer.describe('When the allowance resets, Unix seconds.'),
};

export const optionalAnonymousLimitHeaders = {
  'X-RateLimit-Limit': anonymousLimitHeaders['X-RateLimit-Limit'].optional(),
  'X-RateLimit-Remaining': anonymousLimitHeaders['X-RateLimit-Remaining'].optional(),
  'X-RateLimit-Reset': anonymousLimitHeaders['X-RateLimit-Reset'].optional(),
};

export const retryAfter = { 'Retry-After': integer.describe('Seconds to wait before retrying.') };

/** A file answer (DECISIONS §6, §7): what DuckDB and other range readers rely on. */
export const fileHeaders = {
  ETag: z.string().describe('Strong ETag of the stored file.'),
  'Last-Modified': z.string(),
  'Accept-Ranges': z.literal('bytes'),
  'Cache-Control': z.string(),
  'Content-Length': integer.optional(),
};

export const contentRange = { 'Content-Range': z.string().describe('`bytes start-end/size` of the part sent.') };

/** Request headers of the file routes. */
export const fileRequestHeaders = z.object({
  range: z.string().optional().describe('One byte range, `bytes=start-end`; answered with 206 or 416.'),
  'if-none-match': z.string().optional().describe('An ETag from an earlier answer; answered with 304 when it matches.'),
  'if-range': z.string().optional().describe('An ETag: the range is honoured only while the file still has it.'),
});

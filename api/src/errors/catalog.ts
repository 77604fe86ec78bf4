/**
 * What each error code means to a client: when it happens and what to do. `docs/errors.md` is
 * generated from this table and `codes.ts` (`npm run docs:errors`); a test fails when it drifts.
 * Typed by `ErrorCode`, so a new code does not compile until it is described here. The numbers
 * are the defaults of the settings that set them (`limits.ts`, the API's and the runner's config),
 * so the catalog cannot promise a limit the service no longer has.
 */
import { DEFAULT_KEEP_VERSIONS } from '@uda/shared/manifest';
import { RUNNER_LIMIT_DEFAULTS } from '@uda/shared/runner-contract';
import { MAX_SQL_LENGTH } from '@uda/shared/sql';
import { PAYMENT_LIMITS, SHEET_QUOTAS } from '../accounts/quotas.ts';
import { apiEnv } from '../config.ts';
import { DEFAULT_LIMITS } from '../limits.ts';
import { MAX_HEADER_BYTES } from '../server.ts';
import { EMAIL_LIMITS } from '../session/auth/email-limit.ts';
import { EMAIL_TOKEN_TTL_S } from '../session/auth/email-tokens.ts';
import type { ErrorCode } from './codes.ts';

export interface ErrorEntry {
  /** When the service answers with the code. */
  readonly when: string;
  /** What the client should do. */
  readonly action: string;
  /** The body shape, by route family (SPEC "Error shapes"). */
  readonly shape: string;
}

const LOOKUP = 'lookup envelope `{status, account_state, data: {error, code}}`';
const FLAT = 'flat `{status, message}`';
const SQL = 'flat with `code`: `{status, message, code}`';
const SESSION = 'flat with `code` (internal dashboard routes only)';

const count = (n: number) => n.toLocaleString('en-US');
const MINUTE_S = 60;
const HOUR_S = 60 * MINUTE_S;
/** Whole hours, minutes or seconds, whichever reads best: `24 hours`, `15 minutes`, `30 seconds`. */
function duration(seconds: number): string {
  const [n, unit] = seconds % HOUR_S === 0 ? [seconds / HOUR_S, 'hour'] : seconds % MINUTE_S === 0 ? [seconds / MINUTE_S, 'minute'] : [seconds, 'second'];
  return `${count(n as number)} ${unit as string}${n === 1 ? '' : 's'}`;
}
const megabytes = (bytes: number) => `${count(bytes / (1024 * 1024))} MB`;

const { burst, anonymous, exportDaily, sheetDaily, fairShare } = DEFAULT_LIMITS;
/** `free 2, developer 3, pro 4`: a per-tier number as the docs write it. */
/** `free 10 sheets and 100 MB, …`: the sheet quota of each tier. */
const sheetQuotas = Object.entries(SHEET_QUOTAS).map(([tier, q]) => `${tier} ${count(q.sheets)} sheets and ${megabytes(q.bytes)}`).join(', ');
const perTier = (byTier: Readonly<Record<string, number>>) => Object.entries(byTier).map(([tier, n]) => `${tier} ${count(n)}`).join(', ');
const queryTimeout = duration(RUNNER_LIMIT_DEFAULTS.queryTimeoutMs / 1000);
const rereadWindow = duration(RUNNER_LIMIT_DEFAULTS.resultTtlSeconds);
const uploadMb = apiEnv.shape.SHEETS_MAX_UPLOAD_MB.parse(undefined);

export const ERROR_CATALOG: Readonly<Record<ErrorCode, ErrorEntry>> = {
  NOT_FOUND_PATH: { when: 'No route has this path and method.', action: 'Check the path against /docs; lookups are `/{source}/{keywords}` with exactly two segments.', shape: '`{error: "Not Found", message}`' },
  METHOD_NOT_ALLOWED: { when: '`GET` or `DELETE` on `/mcp`: the MCP server is stateless and POST-only.', action: 'Use `POST /mcp` (Streamable HTTP, JSON responses).', shape: 'JSON-RPC error `{jsonrpc, error: {code: -32000, message}, id: null}`' },
  AUTH_REQUIRED: { when: 'An export or SQL route without a valid key (missing, unknown or revoked).', action: 'Send `Authorization: Bearer <API_KEY>` (or `?token=` where the route accepts it).', shape: FLAT },
  SHEET_AUTH_REQUIRED: { when: 'A connected-sheet route without a valid key.', action: 'Send `Authorization: Bearer <API_KEY>` or `?token=`.', shape: '`{error: "Unauthorized", message: "No token provided"}`' },
  INSUFFICIENT_CREDIT: { when: 'The balance is zero, or cannot cover the rows or file asked for.', action: 'Top up or upgrade, or ask for fewer rows (`limit`, `LIMIT`); `credits` in the body says what it would cost.', shape: 'flat with `error: "insufficient_credit"` and `credits`; on lookups also `account_state` and `data.code`' },
  RATE_LIMITED: { when: `More than ${count(burst.points)} requests in ${duration(burst.windowS)} from one IP (the burst limit, before authentication).`, action: 'Wait `Retry-After` seconds.', shape: '`{status, error, message, data: {error, code}}`, or text/plain when preferred' },
  REQUEST_LIMIT_EXCEEDED: { when: `The anonymous allowance (${count(anonymous.points)} successful lookups per ${duration(anonymous.windowS)} per IP) is spent.`, action: 'Send an API key, or wait until `X-RateLimit-Reset`.', shape: '`{status, error, account_state, message, limit, remaining, hint}`' },
  EXPORT_LIMIT_EXCEEDED: { when: `The account made ${count(exportDaily)} export downloads and SQL queries this UTC day.`,
    action: `Wait \`Retry-After\` seconds (until UTC midnight); cached re-reads within ${rereadWindow} do not count.`, shape: FLAT },
  SHEET_LIMIT_EXCEEDED: { when: `The account made ${count(sheetDaily)} connected-sheet requests this UTC day.`, action: 'Wait `Retry-After` seconds (until UTC midnight).', shape: FLAT },
  INVALID_INPUT: { when: 'A parameter, path segment or body is malformed: an unsupported source, bad keywords or `limit`, an unknown export format or table, a bad upload.', action: 'Fix the request as the message says; retrying unchanged gives the same answer.', shape: `lookup envelope \`{status, account_state, data: {error}}\` on lookups, ${FLAT} elsewhere` },
  REQUEST_TOO_LARGE: { when: `The request line and headers pass ${count(MAX_HEADER_BYTES)} bytes (the room every SQL text within ${count(MAX_SQL_LENGTH)} characters needs in \`?sql=\`).`, action: 'Send long SQL in the body of `POST /api/v1/query`.', shape: FLAT },
  SESSION_REQUIRED: { when: 'A dashboard session route (internal, not part of the public API) without a signed-in session.', action: 'Sign in to the dashboard.', shape: SESSION },
  CSRF_REJECTED: { when: 'A state-changing dashboard session route without the session\'s CSRF token.', action: 'Reload the dashboard page and retry.', shape: SESSION },
  SIGNIN_FAILED: { when: 'Dashboard sign-in with a wrong email or password.', action: 'Check the email and password.', shape: SESSION },
  SIGNIN_RATE_LIMITED: { when: 'Too many dashboard sign-in or sign-up attempts from one IP or for one email.', action: 'Wait a few minutes.', shape: SESSION },
  EMAIL_TAKEN: { when: 'Dashboard sign-up with an email that already has an account.', action: 'Sign in instead.', shape: SESSION },
  PAYMENTS_PENDING: { when: `A dashboard payment request while ${PAYMENT_LIMITS.pendingPerAccount} of the account's requests still wait for an operator.`, action: 'Wait until an operator approves or rejects one.', shape: SESSION },
  REAUTH_REQUIRED: { when: 'Reveal on the dashboard when the sign-in is more than a few minutes old.', action: 'Enter the password again.', shape: SESSION },
  EMAIL_NOT_VERIFIED: { when: 'SQL (`/api/v1/query*`, a sheet\'s query, MCP `run_sql`), an export download or a sheet upload by an account that signed up itself and has not opened the link sent to its email yet. Lookups and MCP search work meanwhile, at the Free allowance. Accounts made by an operator are verified.', action: 'Open the link in the email (the dashboard\'s Keys page sends a new one), then retry.', shape: SQL },
  EMAIL_LINK_INVALID: { when: `A dashboard verification or password-reset link that is expired (verification after ${duration(EMAIL_TOKEN_TTL_S.verify)}, reset after ${duration(EMAIL_TOKEN_TTL_S.reset)}), used already, or not one the service sent.`, action: 'Ask for a new link: "Resend" on the dashboard for verification, "Forgot password" for a reset.', shape: SESSION },
  EMAIL_RATE_LIMITED: { when: `Too many emails asked for: verification ${count(EMAIL_LIMITS.verifyPerAccount.points)} per account and ${count(EMAIL_LIMITS.verifyPerAddress.points)} per IP per ${duration(EMAIL_LIMITS.verifyPerAccount.durationS).replace(/^1 /, '')}; password reset ${count(EMAIL_LIMITS.resetPerEmail.points)} per email and ${count(EMAIL_LIMITS.resetPerAddress.points)} per IP per ${duration(EMAIL_LIMITS.resetPerEmail.durationS).replace(/^1 /, '')}.`, action: 'Wait `Retry-After` seconds; check the spam folder for the emails already sent.', shape: SESSION },
  INTERNAL_ERROR: { when: 'An unexpected failure inside the service. The body never carries internal text; `X-Request-Id` identifies it in the logs.', action: 'Retry later; report the `X-Request-Id` if it persists.', shape: '`{error: {message: "Internal Server Error"}}`, or the lookup envelope with `data.code`' },
  SERVICE_UNAVAILABLE: { when: 'PostgreSQL or Redis could not be reached for a moment (a restart, a failover, a pool that cannot connect). Any route can answer it; nothing was charged.', action: 'Retry after `Retry-After` seconds.', shape: '`{status, message, code}`, or the lookup envelope with `data.code`' },
  ADMIN_UNAUTHORIZED: { when: 'The admin API (private port) without the admin token.', action: 'Operators only: send the admin bearer token.', shape: FLAT },
  ADMIN_NOT_FOUND: { when: 'The admin API names an account or key that does not exist.', action: 'Operators only: check the id.', shape: FLAT },
  UPSTREAM_RATE_LIMITED: { when: 'A live source (Wikipedia, arXiv, Stack Exchange, PyPI, OpenAlex) is rate-limiting the service and no stored copy matches.', action: 'Retry after `Retry-After` seconds when sent, otherwise later.', shape: LOOKUP },
  UPSTREAM_UNAVAILABLE: { when: 'A live source is not responding (or timed out) and no stored copy matches.', action: 'Retry later.', shape: LOOKUP },
  UPSTREAM_FORBIDDEN: { when: 'A live source refused the service\'s request (for example OpenAlex without its API key).', action: 'Retry later; operators should check the source\'s credentials.', shape: LOOKUP },
  UPSTREAM_BAD_RESPONSE: { when: 'A live source answered with something the service could not parse.', action: 'Retry later.', shape: LOOKUP },
  SOURCE_UNAVAILABLE: { when: 'A stored source exists but could not be loaded now: the query-runner is unreachable, or the lookups\' own capacity is full. Answered 503 (DECISIONS §4 Fair shares).', action: 'Retry after `Retry-After` seconds.', shape: LOOKUP },
  LOOKUP_NOT_FOUND: { when: 'A lookup found nothing: `No results found for "{keywords}" in {source}`.', action: 'Try other keywords or another source.', shape: 'lookup envelope `{status, account_state, data: {error}}`' },
  QUERY_INVALID: { when: `The SQL is missing, over ${count(MAX_SQL_LENGTH)} characters, not one SELECT, uses a disallowed operation, or fails in the engine.`, action: 'Fix the query as the message says.', shape: SQL },
  QUERY_TIMEOUT: { when: `The query (or a sheet search) ran longer than ${queryTimeout}.`, action: 'Make the query cheaper: filter earlier, select fewer columns.', shape: SQL },
  QUERY_RESULT_TOO_LARGE: { when: `The result is over ${megabytes(RUNNER_LIMIT_DEFAULTS.maxResultBytes)} in the requested format.`, action: 'Select fewer rows or columns.', shape: SQL },
  QUERY_BUSY: { when: 'The same query from an earlier request is still running (its per-query lock is held). A service-side wait, so a 503.', action: 'Retry after `Retry-After` seconds; the finished result is then a free re-read.', shape: SQL },
  QUERY_CONCURRENCY_LIMITED: { when: `The account already runs as many SQL queries at once as its tier allows (${perTier(fairShare.concurrent)}), across every pod and runner, and none ended within ${duration(fairShare.waitMs / 1000)}. The caller's own parallelism, so a 429, not a service failure.`, action: 'Send fewer queries at once, or retry after `Retry-After` seconds; upgrading raises the limit.', shape: SQL },
  RUNNER_BUDGET_EXCEEDED: { when: `The account's queries that timed out or hit the memory cap used up its runner-seconds for this ${duration(fairShare.budgetWindowS).replace(/^1 /, '')} (${perTier(fairShare.budgetSeconds)}). Successful queries do not count; errors stay unbilled.`, action: 'Wait `Retry-After` seconds (until the window resets, on the clock hour UTC by default); make slow queries cheaper.', shape: SQL },
  QUERY_BACKEND_UNAVAILABLE: { when: 'No query-runner or the object store could be reached, a runner failed mid-query, or every runner slot open to the caller\'s capacity class stayed taken past the bounded wait (a service-side shortage).', action: 'Retry after `Retry-After` seconds.', shape: SQL },
  DATASET_NOT_FOUND: { when: 'The connected sheet does not exist or belongs to another account.', action: 'Check the id or slug (`GET /api/v1/datasets` lists yours).', shape: FLAT },
  DATASET_FORBIDDEN: { when: '`datasetIds`/`datasets` names a sheet that is not yours or not ready yet.', action: 'Use your own sheets; wait until the sheet\'s status is `ready`.', shape: FLAT },
  DATASET_CONFLICT: { when: 'The slug is already used by another of your sheets, or the sheet changed during the upload.', action: 'Choose another slug, or retry the upload.', shape: FLAT },
  UPLOAD_TOO_LARGE: { when: `The upload is larger than the configured maximum (${uploadMb} MB by default).`, action: 'Upload a smaller file (Parquet is the most compact).', shape: FLAT },
  SHEET_QUOTA_EXCEEDED: { when: `An upload would take the account past its plan's sheets quota: a number of sheets and a total of file bytes (${sheetQuotas}). \`GET /api/v1/datasets\` shows the quota and what is used.`, action: 'Delete a sheet, or upgrade. Nothing was stored.', shape: FLAT },
  EXPORT_NOT_FOUND: { when: `No export has been built yet, the version is not kept (the last ${DEFAULT_KEEP_VERSIONS} are), or the file vanished mid-request.`, action: 'Drop `?version=` or pick a kept one; retry for a vanished file.', shape: FLAT },
  EXPORT_UNAVAILABLE: { when: 'The export store could not be read.', action: 'Retry after `Retry-After` seconds.', shape: FLAT },
};

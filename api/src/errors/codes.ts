/**
 * The one error vocabulary (STYLE §3): every code the gateway answers with, its HTTP status, and
 * the spec's body shape for it (SPEC "Errors"). Handlers throw `ApiError(ErrorCode.X, …)`; only
 * `bodyFor` builds error JSON.
 */

/** Which family of routes answered: decides the body shape of shared codes (402, 500). */
export type ErrorStyle = 'lookup' | 'flat' | 'plain';

export type AccountState = 'authenticated' | 'anonymous';

export const ErrorCode = {
  NOT_FOUND_PATH: 'NOT_FOUND_PATH',
  METHOD_NOT_ALLOWED: 'METHOD_NOT_ALLOWED',
  AUTH_REQUIRED: 'AUTH_REQUIRED',
  SHEET_AUTH_REQUIRED: 'SHEET_AUTH_REQUIRED',
  INSUFFICIENT_CREDIT: 'INSUFFICIENT_CREDIT',
  RATE_LIMITED: 'RATE_LIMITED',
  REQUEST_LIMIT_EXCEEDED: 'REQUEST_LIMIT_EXCEEDED',
  EXPORT_LIMIT_EXCEEDED: 'EXPORT_LIMIT_EXCEEDED',
  SHEET_LIMIT_EXCEEDED: 'SHEET_LIMIT_EXCEEDED',
  INVALID_INPUT: 'INVALID_INPUT',
  INTERNAL_ERROR: 'INTERNAL_ERROR',
  /** PostgreSQL or Redis could not be reached for a moment: 503 with Retry-After, never a 500. */
  SERVICE_UNAVAILABLE: 'SERVICE_UNAVAILABLE',
  /** Request line and headers over the server's limit (answered before Express sees the request). */
  REQUEST_TOO_LARGE: 'REQUEST_TOO_LARGE',
  ADMIN_UNAUTHORIZED: 'ADMIN_UNAUTHORIZED',
  ADMIN_NOT_FOUND: 'ADMIN_NOT_FOUND',
  // Data lookups (SPEC "Data source codes"): lookup envelope with `data.code`, never billed.
  UPSTREAM_RATE_LIMITED: 'UPSTREAM_RATE_LIMITED',
  UPSTREAM_UNAVAILABLE: 'UPSTREAM_UNAVAILABLE',
  UPSTREAM_FORBIDDEN: 'UPSTREAM_FORBIDDEN',
  UPSTREAM_BAD_RESPONSE: 'UPSTREAM_BAD_RESPONSE',
  SOURCE_UNAVAILABLE: 'SOURCE_UNAVAILABLE',
  /** A lookup that found nothing: 404 envelope without `code` (SPEC: code only on upstream/internal failures). */
  LOOKUP_NOT_FOUND: 'LOOKUP_NOT_FOUND',
  // SQL failures (runner codes): flat `{status, message, code}` (SPEC "Error shapes": `code` added on SQL failures).
  QUERY_INVALID: 'QUERY_INVALID',
  QUERY_TIMEOUT: 'QUERY_TIMEOUT',
  QUERY_RESULT_TOO_LARGE: 'QUERY_RESULT_TOO_LARGE',
  QUERY_BUSY: 'QUERY_BUSY',
  QUERY_BACKEND_UNAVAILABLE: 'QUERY_BACKEND_UNAVAILABLE',
  /** DECISIONS §4 Fair shares: the account's hourly runner-seconds for failed runs are spent. */
  RUNNER_BUDGET_EXCEEDED: 'RUNNER_BUDGET_EXCEEDED',
  /** DECISIONS §4 Fair shares: the caller already runs its tier's share of queries at once (its own excess: 429). */
  QUERY_CONCURRENCY_LIMITED: 'QUERY_CONCURRENCY_LIMITED',
  // Connected sheets (DECISIONS §8): flat `{status, message}`.
  DATASET_NOT_FOUND: 'DATASET_NOT_FOUND',
  DATASET_FORBIDDEN: 'DATASET_FORBIDDEN',
  DATASET_CONFLICT: 'DATASET_CONFLICT',
  UPLOAD_TOO_LARGE: 'UPLOAD_TOO_LARGE',
  SHEET_QUOTA_EXCEEDED: 'SHEET_QUOTA_EXCEEDED',
  // Export downloads (DECISIONS §7): flat `{status, message}`.
  EXPORT_NOT_FOUND: 'EXPORT_NOT_FOUND',
  EXPORT_UNAVAILABLE: 'EXPORT_UNAVAILABLE',
  // Dashboard session routes (DECISIONS §10, internal): flat `{status, message, code}`.
  SESSION_REQUIRED: 'SESSION_REQUIRED',
  CSRF_REJECTED: 'CSRF_REJECTED',
  SIGNIN_FAILED: 'SIGNIN_FAILED',
  SIGNIN_RATE_LIMITED: 'SIGNIN_RATE_LIMITED',
  EMAIL_TAKEN: 'EMAIL_TAKEN',
  REAUTH_REQUIRED: 'REAUTH_REQUIRED',
  PAYMENTS_PENDING: 'PAYMENTS_PENDING',
  // Verified sign-up and password reset by email (DECISIONS §5 "Email").
  /** SQL, exports and sheet uploads before the account opened the link sent to its email. */
  EMAIL_NOT_VERIFIED: 'EMAIL_NOT_VERIFIED',
  /** A verification or reset link that is expired, used already, or not one we sent. */
  EMAIL_LINK_INVALID: 'EMAIL_LINK_INVALID',
  /** Too many verification or reset emails asked for, per account, email or address. */
  EMAIL_RATE_LIMITED: 'EMAIL_RATE_LIMITED',
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export const STATUS: Readonly<Record<ErrorCode, number>> = {
  NOT_FOUND_PATH: 404,
  METHOD_NOT_ALLOWED: 405,
  AUTH_REQUIRED: 401,
  SHEET_AUTH_REQUIRED: 401,
  INSUFFICIENT_CREDIT: 402,
  RATE_LIMITED: 429,
  REQUEST_LIMIT_EXCEEDED: 429,
  EXPORT_LIMIT_EXCEEDED: 429,
  SHEET_LIMIT_EXCEEDED: 429,
  INVALID_INPUT: 400,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
  REQUEST_TOO_LARGE: 431,
  ADMIN_UNAUTHORIZED: 401,
  ADMIN_NOT_FOUND: 404,
  UPSTREAM_RATE_LIMITED: 503,
  UPSTREAM_UNAVAILABLE: 503,
  UPSTREAM_FORBIDDEN: 502,
  UPSTREAM_BAD_RESPONSE: 502,
  // DECISIONS §4 Fair shares: a stored lookup that cannot be served now is a 503 with Retry-After.
  SOURCE_UNAVAILABLE: 503,
  LOOKUP_NOT_FOUND: 404,
  QUERY_INVALID: 400,
  QUERY_TIMEOUT: 408,
  QUERY_RESULT_TOO_LARGE: 413,
  QUERY_BUSY: 503,
  QUERY_BACKEND_UNAVAILABLE: 503,
  RUNNER_BUDGET_EXCEEDED: 429,
  QUERY_CONCURRENCY_LIMITED: 429,
  DATASET_NOT_FOUND: 404,
  DATASET_FORBIDDEN: 403,
  DATASET_CONFLICT: 409,
  UPLOAD_TOO_LARGE: 413,
  SHEET_QUOTA_EXCEEDED: 403,
  EXPORT_NOT_FOUND: 404,
  EXPORT_UNAVAILABLE: 503,
  SESSION_REQUIRED: 401,
  CSRF_REJECTED: 403,
  SIGNIN_FAILED: 401,
  SIGNIN_RATE_LIMITED: 429,
  EMAIL_TAKEN: 409,
  REAUTH_REQUIRED: 401,
  PAYMENTS_PENDING: 409,
  EMAIL_NOT_VERIFIED: 403,
  EMAIL_LINK_INVALID: 400,
  EMAIL_RATE_LIMITED: 429,
};

/** Messages fixed by the spec or by DECISIONS, quoted exactly. */
export const MESSAGES = {
  AUTH_REQUIRED: 'Authentication required. Include your API key in the Authorization header.',
  SHEET_AUTH_REQUIRED: 'No token provided',
  EXPORT_LIMIT_EXCEEDED: 'Export rate limit exceeded. Maximum 1,000 exports per day per account.',
  SHEET_LIMIT_EXCEEDED: 'Connected sheet rate limit exceeded. Maximum 1,000 sheet requests per day per account.',
  RATE_LIMITED: 'Too many requests from this IP, please try again later.',
  REQUEST_LIMIT_EXCEEDED: 'Anonymous request limit reached: 50 requests per 24 hours per IP address.',
  REQUEST_LIMIT_HINT:
    'Send an API key in the Authorization header (Authorization: Bearer <API_KEY>) for metered access, or wait for the window to reset.',
  INSUFFICIENT_CREDIT: 'Insufficient credit: your balance cannot cover this request. Nothing was charged.',
  INTERNAL_ERROR: 'Internal Server Error',
  SERVICE_UNAVAILABLE: 'The service could not reach its database or cache for a moment. Nothing was charged; please retry.',
  REQUEST_TOO_LARGE: 'The URL and headers of this request are too large. Send long SQL in the body of POST /api/v1/query.',
  METHOD_NOT_ALLOWED: 'Method not allowed.',
  ADMIN_UNAUTHORIZED: 'Admin token missing or wrong.',
  SOURCE_UNAVAILABLE: 'The source exists but could not be loaded right now. No credit was used.',
  DATASET_NOT_FOUND: 'Dataset not found.',
  QUERY_BACKEND_UNAVAILABLE: 'The query service is temporarily unavailable. Nothing was charged; please retry.',
  EXPORT_UNAVAILABLE: 'The export store is temporarily unavailable. Nothing was charged; please retry.',
  SESSION_REQUIRED: 'Sign in to the dashboard first.',
  CSRF_REJECTED: 'Missing or wrong CSRF token. Reload the page and try again.',
  SIGNIN_FAILED: 'Wrong email or password.',
  SIGNIN_RATE_LIMITED: 'Too many sign-in attempts. Wait a few minutes and try again.',
  EMAIL_TAKEN: 'An account with this email already exists. Sign in instead.',
  REAUTH_REQUIRED: 'Enter your password again to reveal the key.',
  EMAIL_NOT_VERIFIED:
    'Verify your email first: open the link we sent to it (the dashboard can send it again). Until then this account can make lookups and MCP searches, but not SQL, exports or sheet uploads.',
  EMAIL_LINK_INVALID: 'This link is not valid. Ask for a new one.',
  EMAIL_RATE_LIMITED: 'Too many emails asked for. Wait a while and try again.',
} as const;

/** Extra facts some codes put in their body. */
export interface ErrorDetails {
  /** 402: balance and the cost of the refused request, micro-USD. */
  credits?: { remainingMicro: number; requestCostMicro: number };
  /** 429 anonymous: the allowance. */
  limit?: number;
  /** 404 / 400: what the caller asked for, safe to echo. */
  message?: string;
}

export interface BodyContext {
  style: ErrorStyle;
  accountState: AccountState;
}

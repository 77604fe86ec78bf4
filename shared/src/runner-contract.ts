/**
 * The internal HTTP contract between API pods and query-runners (STYLE §8: the API talks to the
 * runner only through these schemas). Both sides validate with the same zod objects.
 */
import { z } from 'zod';

/**
 * The defaults of the runner's query limits (`query-runner/src/config.ts` reads them), here so the
 * API's error catalog can document the same numbers without reaching into the runner's workspace.
 */
export const RUNNER_LIMIT_DEFAULTS = {
  queryTimeoutMs: 30_000,
  maxRows: 1_000,
  maxResultBytes: 64 * 1024 * 1024,
  resultTtlSeconds: 300,
} as const;

/**
 * One result row. Checked as a plain object, not with `z.record`: a record rebuilds the object and
 * drops a `__proto__` key, so a column named `__proto__` would vanish from the rows.
 */
export const rowSchema = z.custom<Record<string, unknown>>(
  (value) => value !== null && typeof value === 'object' && !Array.isArray(value),
  'a row object',
);

/**
 * Every caller of the runner API except the health, readiness and metrics probes sends this bearer
 * token: a Kubernetes Secret in the chart; embedded, the file of that name in DATA_DIR.
 */
export const RUNNER_TOKEN_FILE = 'runner-token';

export function runnerAuthorization(token: string): { authorization: string } {
  return { authorization: `Bearer ${token}` };
}

export const RESULT_FORMATS = ['json', 'csv', 'parquet'] as const;
export const resultFormatSchema = z.enum(RESULT_FORMATS);
export type ResultFormat = z.infer<typeof resultFormatSchema>;

/** A connected sheet to expose as a table: its Parquet object and the name the SQL uses. */
export const datasetRefSchema = z.object({
  name: z.string().regex(/^[a-z][a-z0-9_]{0,62}$/, 'a lower-case SQL identifier'),
  key: z.string().min(1).max(1024),
});

export const runQueryRequestSchema = z.object({
  queryId: z.uuid(),
  sql: z.string(),
  format: resultFormatSchema.default('json'),
  datasets: z.array(datasetRefSchema).max(20).default([]),
  /**
   * An opaque key of the caller (the API sends a hash of the account): the runner's worker pool
   * gives one tenant at most half its workers, so one caller's runaways never take them all.
   */
  tenant: z.string().max(128).optional(),
  /**
   * The caller's capacity class (DECISIONS §4 Capacity classes): `free` (Free accounts) holds at most
   * half of the workers, `paid` (Developer, Pro) the rest; either borrows the other's idle ones. A
   * request without one (an API from before the classes) is not held to the free share.
   */
  capacityClass: z.enum(['free', 'paid']).optional(),
});
export type RunQueryRequest = z.infer<typeof runQueryRequestSchema>;
export type CapacityClass = NonNullable<RunQueryRequest['capacityClass']>;

export const storedObjectSchema = z.object({
  key: z.string(),
  size: z.number().int().nonnegative(),
  etag: z.string(),
  contentType: z.string(),
});
export type StoredObject = z.infer<typeof storedObjectSchema>;

export const columnSchema = z.object({ name: z.string(), type: z.string() });

/** The result index entry: what any runner or API pod needs to serve a stored result. */
export const resultMetaSchema = z.object({
  queryId: z.uuid(),
  rowCount: z.number().int().nonnegative(),
  truncated: z.boolean(),
  sqlExecuted: z.string(),
  columns: z.array(columnSchema),
  tables: z.array(z.string()),
  /** `{source: rows}` for the billed source (DECISIONS §3); empty when nothing is billable. */
  rowsBySource: z.record(z.string(), z.number().int().nonnegative()),
  dataVersion: z.string(),
  createdAt: z.iso.datetime(),
  /** Unix ms when the 5-minute window (DECISIONS §6) closes. */
  expiresAt: z.number().int(),
  objects: z.object({
    parquet: storedObjectSchema,
    json: storedObjectSchema.optional(),
    csv: storedObjectSchema.optional(),
  }),
});
export type ResultMeta = z.infer<typeof resultMetaSchema>;

/** 200 of `POST /v1/queries` and `GET /v1/results/:queryId/:format`. */
export const queryResponseSchema = z.object({
  /** True when the result came from the store instead of a new execution. */
  cached: z.boolean(),
  format: resultFormatSchema,
  result: resultMetaSchema,
  /** Present for format `json`: at most 1,000 row objects. */
  rows: z.array(rowSchema).optional(),
});
export type QueryResponse = z.infer<typeof queryResponseSchema>;

/**
 * The same answer as a result envelope, for a caller that sends `Accept: RESULT_ENVELOPE_TYPE` (the
 * API): line one is this head as JSON, and the rest of the body is the rows' JSON array text (format
 * `json` only), so the API can pass the rows on as bytes without parsing them. The API prices the
 * result from the head (`rowCount`, `rowsBySource`).
 */
export const RESULT_ENVELOPE_TYPE = 'application/vnd.uda.query-result';
export const queryResultHeadSchema = queryResponseSchema.omit({ rows: true });
export type QueryResultHead = z.infer<typeof queryResultHeadSchema>;

export const RUNNER_ERROR_CODES = [
  'QUERY_INVALID',
  'QUERY_TIMEOUT',
  'QUERY_RESULT_TOO_LARGE',
  'QUERY_BUSY',
  'QUERY_BACKEND_UNAVAILABLE',
  'RESULT_NOT_FOUND',
  'INTERNAL',
] as const;
export const runnerErrorCodeSchema = z.enum(RUNNER_ERROR_CODES);
export type RunnerErrorCode = z.infer<typeof runnerErrorCodeSchema>;

/** HTTP status of each code on the internal API; the API maps codes to the public shapes. */
export const RUNNER_ERROR_STATUS: Readonly<Record<RunnerErrorCode, number>> = {
  QUERY_INVALID: 400,
  QUERY_TIMEOUT: 408,
  QUERY_RESULT_TOO_LARGE: 413,
  QUERY_BUSY: 503,
  QUERY_BACKEND_UNAVAILABLE: 503,
  RESULT_NOT_FOUND: 404,
  INTERNAL: 500,
};

export const runnerErrorSchema = z.object({
  code: runnerErrorCodeSchema,
  message: z.string(),
  retryAfterSeconds: z.number().int().positive().optional(),
  /** Worker time of a run that timed out or hit the memory cap: it counts against the caller's hourly budget. */
  workerMs: z.number().int().nonnegative().optional(),
});
export type RunnerErrorBody = z.infer<typeof runnerErrorSchema>;

/**
 * A runner error, on both sides of the contract: the runner throws it and answers `toBody()` with
 * `status`; the API's runner client rebuilds it from that body (or makes one when the runner is
 * unreachable), and its callers read `code`, `retryAfterSeconds` and `workerMs`.
 */
export class RunnerError extends Error {
  override readonly name = 'RunnerError';
  readonly code: RunnerErrorCode;
  readonly retryAfterSeconds: number | undefined;
  /**
   * Runner time a run took without a result: the worker time of a timeout or memory kill, or the
   * time the API waited before giving up. It counts against the caller's budget (DECISIONS §4).
   */
  workerMs: number | undefined;

  constructor(code: RunnerErrorCode, message: string, retryAfterSeconds?: number, workerMs?: number) {
    super(message);
    this.code = code;
    this.retryAfterSeconds = retryAfterSeconds;
    this.workerMs = workerMs;
  }

  withWorkerMs(ms: number): this {
    this.workerMs = ms;
    return this;
  }

  get status(): number {
    return RUNNER_ERROR_STATUS[this.code];
  }

  toBody(): RunnerErrorBody {
    return {
      code: this.code,
      message: this.message,
      ...(this.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: this.retryAfterSeconds }),
      ...(this.workerMs === undefined ? {} : { workerMs: this.workerMs }),
    };
  }
}

/** Keyword lookups of the stored sources (gutenberg, census, food, pwc, sec): our SQL, not the user's. */
export const STORED_SOURCES = ['gutenberg', 'census', 'food', 'pwc', 'sec'] as const;

export const lookupRequestSchema = z.object({
  source: z.enum(STORED_SOURCES),
  keywords: z.string().min(1).max(500),
  limit: z.number().int().min(1).max(50).default(10),
});
export type LookupRequest = z.infer<typeof lookupRequestSchema>;

/** 200 of `POST /v1/lookups`: one page of results and the count of every match. */
export const lookupResponseSchema = z.object({
  results: z.array(rowSchema),
  total: z.number().int().nonnegative(),
});
export type LookupResponse = z.infer<typeof lookupResponseSchema>;

/**
 * Keyword search over one connected sheet (`POST /v1/sheets/search`): the runner's own
 * parameterised SQL over every column as text, so the search text is data and never SQL.
 */
export const sheetSearchRequestSchema = z.object({
  key: z.string().min(1).max(1024),
  q: z.string().max(500),
  limit: z.number().int().min(1).max(1000).default(1000),
});
export type SheetSearchRequest = z.infer<typeof sheetSearchRequestSchema>;

export const sheetSearchResponseSchema = z.object({
  rows: z.array(rowSchema),
});
export type SheetSearchResponse = z.infer<typeof sheetSearchResponseSchema>;

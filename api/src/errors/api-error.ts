import { type ErrorCode, type ErrorDetails, MESSAGES, STATUS } from './codes.ts';

/** The one error class. `headers` are set on the response as they are (Retry-After, RateLimit-*). */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: ErrorDetails;
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: ErrorCode, details: ErrorDetails = {}, headers: Record<string, string> = {}) {
    super(details.message ?? (MESSAGES as Record<string, string>)[code] ?? code);
    this.code = code;
    this.status = STATUS[code];
    this.details = details;
    this.headers = headers;
  }
}

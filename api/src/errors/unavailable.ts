/**
 * Which failures mean "a store blinked": PostgreSQL restarting, failing over or refusing
 * connections, a pool that cannot connect, Redis unreachable. They say nothing about the request, so
 * the caller gets 503 SERVICE_UNAVAILABLE with Retry-After and retries, never a 500. This is the
 * one place that decides it; the error handler, the lookups and MCP call it.
 */
import { ApiError } from './api-error.ts';
import { ErrorCode } from './codes.ts';

/** Socket-level codes (node:net) of a server that is down, restarting or unreachable. */
const SOCKET_CODES: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/**
 * PostgreSQL SQLSTATEs of a server that is not serving: class 08 (connection exception), 57P01
 * admin_shutdown (`pg_ctl restart -m fast`), 57P02 crash_shutdown, 57P03 cannot_connect_now
 * (starting up or shutting down), 53300 too_many_connections.
 */
const PG_CODES: ReadonlySet<string> = new Set(['57P01', '57P02', '57P03', '53300']);

/** What pg, knex and ioredis say, without a code, when the connection went away under them. */
const MESSAGES: readonly RegExp[] = [
  /^Connection terminated/, // pg: the server closed the socket (restart, failover)
  /^Connection ended unexpectedly/,
  /^Client has encountered a connection error and is not queryable/,
  /^Client was closed and is not queryable/,
  /^Knex: Timeout acquiring a connection/, // the pool could not connect within its acquire timeout
  /^Connection is closed\.?$/, // ioredis: Redis went away
  /^Stream isn't writeable and enableOfflineQueue options is false/, // ioredis while reconnecting
  /^Reached the max retries per request limit/, // ioredis MaxRetriesPerRequestError
  /^Command timed out$/, // ioredis commandTimeout
];

/** Seconds the caller waits: a restart takes about one, and a pod that retries sooner only adds load. */
const RETRY_AFTER_S = '1';

export function isStoreUnavailable(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 4) return false;
  const { code, message, cause, errors } = error as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  if (typeof code === 'string' && (SOCKET_CODES.has(code) || PG_CODES.has(code) || code.startsWith('08'))) return true;
  if (typeof message === 'string' && MESSAGES.some((pattern) => pattern.test(message) || pattern.test(afterStatement(message)))) return true;
  // AggregateError (a host with several addresses refused them all), or a wrapped cause.
  if (Array.isArray(errors) && errors.some((inner) => isStoreUnavailable(inner, depth + 1))) return true;
  return isStoreUnavailable(cause, depth + 1);
}

/** knex puts the failed statement before the driver's message (`<sql> - <message>`): the message is after the last ` - `. */
function afterStatement(message: string): string {
  const at = message.lastIndexOf(' - ');
  return at < 0 ? message : message.slice(at + 3);
}

export function storeUnavailable(): ApiError {
  return new ApiError(ErrorCode.SERVICE_UNAVAILABLE, {}, { 'Retry-After': RETRY_AFTER_S });
}

/** An ApiError as it is; a blinking store as SERVICE_UNAVAILABLE; anything else unexpected (500). */
export function asApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (isStoreUnavailable(error)) return storeUnavailable();
  return new ApiError(ErrorCode.INTERNAL_ERROR);
}

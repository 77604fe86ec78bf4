/**
 * Serves one immutable object from the object store the way a static file server does (DECISIONS
 * §6, §7): strong ETag, Last-Modified, Accept-Ranges, Content-Length, 206 / 416 for ranges, the
 * preconditions of RFC 9110 §13 (412 for a failed If-Match or If-Unmodified-Since, 304 for a
 * matching If-None-Match or an unchanged If-Modified-Since), HEAD without a body, never a Content-Encoding. Bytes come from
 * the pod's disk cache when it holds the object (`object-cache.ts`), else stream straight from the
 * store with the range forwarded (a whole-object read filling the cache as it goes), so a large
 * file never sits in memory.
 *
 * The outcome tells the caller whether the body was delivered whole, which is what billing needs:
 * a download that breaks part-way is not charged.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { ByteRange, ObjectInfo, ObjectStore } from '@uda/shared/object-store';
import type { ObjectCache } from './object-cache.ts';
import { sendFileRange } from './send-file.ts';
import { type ConditionalHeaders, decideRange, evaluatePreconditions, ifRangeAllowsPartial } from './range.ts';

export interface SendObjectOptions {
  readonly store: ObjectStore;
  /** The pod's cache of immutable objects; without one every read goes to the store. */
  readonly cache?: ObjectCache;
  readonly key: string;
  readonly contentType: string;
  /** Sets `Content-Disposition: attachment; filename="…"`. */
  readonly downloadName?: string;
  /** The object's metadata when the caller has just read it (saves a second HEAD on the store). */
  readonly info?: ObjectInfo;
  /** Extra headers for every answer (metering, rate limits). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Counts the body bytes sent (`uda_export_bytes_streamed_total`), whole or cut. */
  readonly sentBytes?: { inc(bytes: number): void };
  /**
   * Told, as the body goes out, which bytes of the object `[start, end)` it has handed to the
   * connection so far: billing counts the bytes of a download that then breaks (DECISIONS §3).
   */
  readonly onSent?: (span: { start: number; end: number }) => void;
}

export type SendOutcome =
  | { readonly status: 404 }
  | { readonly status: 200 | 206 | 304 | 412 | 416; readonly info: ObjectInfo; readonly bodyBytes: number; readonly complete: boolean };

export async function sendObject(req: IncomingMessage, res: ServerResponse, options: SendObjectOptions): Promise<SendOutcome> {
  const info = options.info ?? (await options.store.head(options.key));
  if (!info) return { status: 404 };
  setObjectHeaders(res, info, options);

  const precondition = evaluatePreconditions(conditionalHeaders(req), info.etag, info.lastModified);
  if (precondition === 'failed') return finish(res, info, 412);
  if (precondition === 'not-modified') return finish(res, info, 304);
  const decision = ifRangeAllowsPartial(header(req, 'if-range'), info.etag)
    ? decideRange(header(req, 'range'), info.size)
    : ({ kind: 'full' } as const);
  if (decision.kind === 'unsatisfiable') {
    res.setHeader('Content-Range', `bytes */${info.size}`);
    return finish(res, info, 416);
  }

  const range = decision.kind === 'partial' ? { start: decision.start, end: decision.end } : undefined;
  const length = range ? range.end - range.start + 1 : info.size;
  const status = range ? 206 : 200;
  if (range) res.setHeader('Content-Range', `bytes ${range.start}-${range.end}/${info.size}`);
  res.setHeader('Content-Length', String(length));
  res.statusCode = status;
  if (req.method === 'HEAD') {
    res.end();
    return { status, info, bodyBytes: 0, complete: true };
  }

  const outcome = await sendBody(res, options, info, range, length, status);
  if (outcome.status !== 404) options.sentBytes?.inc(outcome.bodyBytes);
  return outcome;
}

async function sendBody(
  res: ServerResponse,
  options: SendObjectOptions,
  info: ObjectInfo,
  range: ByteRange | undefined,
  length: number,
  status: 200 | 206,
): Promise<SendOutcome> {
  const cached = await options.cache?.openHit(info);
  if (cached) {
    // undefined: the client went away, or the file failed, part-way; the response is cut, and says so.
    const start = range?.start ?? 0;
    const progress = options.onSent && ((bytes: number) => options.onSent?.({ start, end: start + bytes }));
    const sent = await sendFileRange(res, cached, start, length, progress).catch(() => void res.destroy());
    return { status, info, bodyBytes: sent ?? 0, complete: sent === length };
  }
  return streamFromStore(res, options, info, range, length, status);
}

async function streamFromStore(
  res: ServerResponse,
  options: SendObjectOptions,
  info: ObjectInfo,
  range: ByteRange | undefined,
  length: number,
  status: 200 | 206,
): Promise<SendOutcome> {
  if (range) options.cache?.fillInBackground(options.store, info);
  const object = await options.store.get(options.key, range);
  if (!object) return { status: 404 };
  // Only a whole read of the very version the headers describe may become the cached copy.
  const fill = !range && object.etag === info.etag ? options.cache?.startFill(info) : undefined;
  if (fill) object.body.pipe(fill.stream);
  // pipeline() gives backpressure end to end: the store's socket stops reading while the client's
  // (or the cache file) is full, so memory stays bounded by the stream buffers whatever the file
  // size. Counting bytes, for a cut download's refund, is the only per-chunk work.
  let sent = 0;
  const start = range?.start ?? 0;
  object.body.on('data', (chunk: Buffer) => {
    sent += chunk.length;
    options.onSent?.({ start, end: start + sent });
  });
  const whole = await pipeline(object.body, res).then(
    () => sent === length,
    // The client went away or the store failed mid-stream: the response is cut, and says so.
    () => false,
  );
  await fill?.finish(whole);
  return { status, info, bodyBytes: sent, complete: whole };
}

/**
 * Whether a GET of this object would carry its bytes: its preconditions pass (not a 412 or 304)
 * and its range is satisfiable (not a 416). The exports route asks before it charges, with the
 * `info` it then hands to `sendObject`, so an answer without a body is never charged.
 */
export function wouldSendBody(req: IncomingMessage, info: ObjectInfo): boolean {
  if (req.method !== 'GET') return false;
  if (evaluatePreconditions(conditionalHeaders(req), info.etag, info.lastModified) !== 'proceed') return false;
  return decideRange(header(req, 'range'), info.size).kind !== 'unsatisfiable';
}

function setObjectHeaders(res: ServerResponse, info: ObjectInfo, options: SendObjectOptions): void {
  for (const [name, value] of Object.entries(options.headers ?? {})) res.setHeader(name, value);
  res.setHeader('ETag', info.etag);
  res.setHeader('Last-Modified', info.lastModified.toUTCString());
  res.setHeader('Accept-Ranges', 'bytes');
  res.setHeader('Content-Type', options.contentType);
  // Bodies are billed and keyed: shared caches must not keep them, but the client may revalidate.
  res.setHeader('Cache-Control', 'private, no-cache');
  if (options.downloadName) res.setHeader('Content-Disposition', `attachment; filename="${options.downloadName}"`);
}

function finish(res: ServerResponse, info: ObjectInfo, status: 304 | 412 | 416): SendOutcome {
  res.statusCode = status;
  res.end();
  return { status, info, bodyBytes: 0, complete: true };
}

/** The request's RFC 9110 §13 preconditions; the exports handler reads them too, to bill only bodies. */
export function conditionalHeaders(req: IncomingMessage): ConditionalHeaders {
  return {
    ifMatch: header(req, 'if-match'),
    ifNoneMatch: header(req, 'if-none-match'),
    ifModifiedSince: header(req, 'if-modified-since'),
    ifUnmodifiedSince: header(req, 'if-unmodified-since'),
  };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

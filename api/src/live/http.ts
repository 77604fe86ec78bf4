/**
 * One bounded GET to an upstream: a descriptive User-Agent, a per-request deadline and a body size
 * cap (STYLE §9), with transport failures already mapped to the upstream taxonomy.
 */
import { gunzipSync, inflateSync } from 'node:zlib';
import { UpstreamError, errorForStatus } from './errors.ts';

export interface HttpOptions {
  userAgent: string;
  timeoutMs: number;
  maxBytes: number;
  /** Told how long each call took, whatever its outcome (`uda_upstream_request_duration_seconds`). */
  observe?: (source: string, seconds: number) => void;
}

export interface UpstreamReply {
  status: number;
  headers: Headers;
  body: Buffer;
}

export interface GetOptions {
  accept: string;
  /** Statuses the caller interprets itself (PyPI 404, Stack Exchange 400); others map by status. */
  passStatuses?: readonly number[];
}

export async function httpGet(source: string, url: URL, http: HttpOptions, options: GetOptions): Promise<UpstreamReply> {
  const started = performance.now();
  try {
    return await boundedGet(source, url, http, options);
  } finally {
    http.observe?.(source, (performance.now() - started) / 1000);
  }
}

async function boundedGet(source: string, url: URL, http: HttpOptions, options: GetOptions): Promise<UpstreamReply> {
  const cap = new AbortController();
  const signal = AbortSignal.any([AbortSignal.timeout(http.timeoutMs), cap.signal]);
  let response: Response;
  try {
    response = await fetch(url, {
      signal,
      redirect: 'follow',
      headers: { 'user-agent': http.userAgent, accept: options.accept, 'accept-encoding': 'gzip, deflate' },
    });
  } catch (error) {
    throw transportError(source, error);
  }
  const passed = options.passStatuses?.includes(response.status) ?? false;
  if (!response.ok && !passed) {
    await response.body?.cancel().catch(() => undefined);
    throw errorForStatus(source, response.status, response.headers.get('retry-after'));
  }
  const body = await readCapped(source, response, http.maxBytes, cap);
  return { status: response.status, headers: response.headers, body: decodeUnlabelled(source, response.headers, body, http.maxBytes) };
}

async function readCapped(source: string, response: Response, maxBytes: number, cap: AbortController): Promise<Buffer> {
  const tooLarge = () => new UpstreamError('UPSTREAM_BAD_RESPONSE', source, `body over ${maxBytes} bytes`);
  if (Number(response.headers.get('content-length') ?? 0) > maxBytes && !response.headers.get('content-encoding')) {
    cap.abort();
    throw tooLarge();
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for await (const chunk of response.body ?? []) {
      size += chunk.byteLength;
      // Counted after decompression, so a small compressed bomb is stopped too.
      if (size > maxBytes) {
        cap.abort();
        throw tooLarge();
      }
      chunks.push(chunk);
    }
  } catch (error) {
    throw error instanceof UpstreamError ? error : transportError(source, error);
  }
  return Buffer.concat(chunks);
}

/**
 * fetch decodes gzip and deflate when `content-encoding` says so. Stack Exchange documents that its
 * answers are always compressed, so a compressed body without the header is decoded by its magic bytes.
 */
function decodeUnlabelled(source: string, headers: Headers, body: Buffer, maxBytes: number): Buffer {
  const encoding = headers.get('content-encoding')?.trim().toLowerCase();
  if (encoding && encoding !== 'identity') return body;
  try {
    if (body[0] === 0x1f && body[1] === 0x8b) return gunzipSync(body, { maxOutputLength: maxBytes });
    if (body[0] === 0x78 && [0x01, 0x5e, 0x9c, 0xda].includes(body[1] ?? 0)) return inflateSync(body, { maxOutputLength: maxBytes });
  } catch (error) {
    throw new UpstreamError('UPSTREAM_BAD_RESPONSE', source, `undecodable compressed body: ${(error as Error).message}`);
  }
  return body;
}

function transportError(source: string, error: unknown): UpstreamError {
  const err = error as Error & { cause?: { code?: string; message?: string } };
  if (err.name === 'TimeoutError') return new UpstreamError('UPSTREAM_UNAVAILABLE', source, 'timed out');
  // A body that fails to decompress is a reply we cannot read, not an outage.
  if (err.cause?.code?.startsWith('Z_')) return new UpstreamError('UPSTREAM_BAD_RESPONSE', source, `bad compression: ${err.cause.message}`);
  return new UpstreamError('UPSTREAM_UNAVAILABLE', source, `${err.message}${err.cause?.code ? ` (${err.cause.code})` : ''}`);
}

/** JSON or a BAD_RESPONSE: an HTML error page served with 200 is the usual culprit. */
export function parseJson(source: string, reply: UpstreamReply): unknown {
  const type = reply.headers.get('content-type') ?? '';
  if (type.includes('text/html')) throw new UpstreamError('UPSTREAM_BAD_RESPONSE', source, 'HTML page where JSON was expected');
  try {
    return JSON.parse(reply.body.toString('utf8'));
  } catch {
    throw new UpstreamError('UPSTREAM_BAD_RESPONSE', source, 'body is not JSON');
  }
}

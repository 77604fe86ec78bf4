/**
 * A loopback HTTP server standing in for one upstream. It answers with the real recorded responses
 * (see each source's fake), can be switched into every failure mode the live clients must map, and
 * records each request it received so tests can assert URLs, headers and call counts.
 */
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { readFileSync } from 'node:fs';

export type CommonMode =
  | 'ok'
  | 'rate-limited'
  | 'rate-limited-retry-after'
  | 'rate-limited-retry-date'
  | 'forbidden'
  | 'unauthorized'
  | 'server-error'
  | 'unavailable'
  | 'hang'
  | 'reset'
  | 'html'
  | 'truncated'
  | 'oversized';

export interface RecordedRequest {
  method: string;
  url: URL;
  headers: IncomingHttpHeaders;
  /** Arrival time (ms since epoch), for the etiquette's spacing assertions. */
  at: number;
}

export interface FakeAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer | string;
}

/** Answers a request in the given mode, or returns undefined to fall back to the common modes. */
export type FakeHandler<M extends string> = (url: URL, mode: M | CommonMode) => FakeAnswer | undefined;

export interface FakeUpstream<M extends string = never> {
  readonly url: string;
  readonly requests: RecordedRequest[];
  mode: M | CommonMode;
  /** Delay before answering, so concurrent callers overlap (coalescing tests). */
  delayMs: number;
  close(): Promise<void>;
}

export const LIVE_DATA = new URL('../../../exporter/data/live/', import.meta.url);

export function recorded(file: string): Buffer {
  return readFileSync(new URL(file, LIVE_DATA));
}

const HTML_PAGE = '<!DOCTYPE html><html><head><title>Service error</title></head><body><h1>Something went wrong</h1></body></html>';

/** The failure answers every upstream can give; `happy` supplies the body the ok, truncated and oversized modes start from. */
function common(mode: CommonMode, happy: FakeAnswer): FakeAnswer | 'hang' | 'reset' {
  const html = (status: number, headers: Record<string, string> = {}): FakeAnswer => ({ status, headers: { 'content-type': 'text/html; charset=utf-8', ...headers }, body: HTML_PAGE });
  switch (mode) {
    case 'ok':
      return happy;
    case 'rate-limited':
      return html(429);
    case 'rate-limited-retry-after':
      return html(429, { 'retry-after': '7' });
    case 'rate-limited-retry-date':
      return html(429, { 'retry-after': new Date(Date.now() + 30_000).toUTCString() });
    case 'forbidden':
      return html(403);
    case 'unauthorized':
      return html(401);
    case 'server-error':
      return html(500);
    case 'unavailable':
      return html(503);
    case 'html':
      return html(200);
    case 'truncated': {
      const body = Buffer.from(happy.body);
      return { ...happy, body: body.subarray(0, Math.floor(body.length / 2)) };
    }
    case 'oversized':
      return { ...happy, body: Buffer.alloc(6 * 1024 * 1024, 0x20) };
    case 'hang':
    case 'reset':
      return mode;
  }
}

export async function startFake<M extends string>(handler: FakeHandler<M>): Promise<FakeUpstream<M>> {
  const sockets = new Set<Socket>();
  const fake = { url: '', requests: [] as RecordedRequest[], mode: 'ok' as M | CommonMode, delayMs: 0, close: async (): Promise<void> => undefined };
  const server = createServer((req, res) => void answer(req, res));

  async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', fake.url);
    fake.requests.push({ method: req.method ?? 'GET', url, headers: req.headers, at: Date.now() });
    if (fake.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, fake.delayMs));
    const own = handler(url, fake.mode);
    const reply = own ?? common(fake.mode as CommonMode, handler(url, 'ok') ?? { status: 404, headers: {}, body: 'not found' });
    if (reply === 'hang') return;
    if (reply === 'reset') return void req.socket.resetAndDestroy();
    res.writeHead(reply.status, reply.headers);
    res.end(reply.body);
  }

  server.on('connection', (socket) => (sockets.add(socket), socket.on('close', () => sockets.delete(socket))));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
  return fake;
}

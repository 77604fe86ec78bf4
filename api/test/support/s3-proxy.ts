/**
 * An HTTP proxy in front of the real S3-compatible server, for tests that must know what reached
 * S3: it records the object GETs by key and the body bytes it relayed, and can slow the bodies down
 * (so a copy is still running when the test acts) or cut one part-way (a broken S3 read). Requests
 * and their signatures pass through unchanged: the SDK signs for the proxy's host, and the server
 * checks the Host header it receives, which is the same.
 */
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { pipeline } from 'node:stream/promises';

export interface S3Proxy {
  /** Give this as `S3_ENDPOINT` (or the store's endpoint). */
  readonly endpoint: string;
  /** Object keys of the GETs that arrived, in order (whole and ranged). */
  readonly gets: string[];
  /** Body bytes relayed for a key's GETs so far. */
  bodyBytes(key: string): number;
  /** Each relayed body chunk of an object GET waits this long first; 0 relays at full speed. */
  delayMs: number;
  /** The next GET bodies of this key are cut (the connection dropped) after this many bytes. */
  cut: { key: string; afterBytes: number } | undefined;
  close(): Promise<void>;
}

export async function startS3Proxy(target: string, bucket: string): Promise<S3Proxy> {
  const upstream = new URL(target);
  const relayed = new Map<string, number>();
  const proxy: S3Proxy = {
    endpoint: '',
    gets: [],
    bodyBytes: (key) => relayed.get(key) ?? 0,
    delayMs: 0,
    cut: undefined,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
  const server = createServer((req, res) => {
    const key = req.method === 'GET' ? objectKey(req, bucket) : undefined;
    if (key !== undefined) proxy.gets.push(key);
    const out = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      relay(answer, res, key).catch(() => res.destroy());
    });
    out.on('error', () => res.destroy());
    req.pipe(out);
  });

  async function relay(answer: IncomingMessage, res: ServerResponse, key: string | undefined): Promise<void> {
    let sent = 0;
    const count = (bytes: number) => {
      sent += bytes;
      if (key !== undefined) relayed.set(key, (relayed.get(key) ?? 0) + bytes);
    };
    const pace = async function* (source: AsyncIterable<Buffer>) {
      for await (const chunk of source) {
        if (key !== undefined && proxy.delayMs > 0) await new Promise((r) => setTimeout(r, proxy.delayMs));
        if (key !== undefined && proxy.cut?.key === key && sent + chunk.length > proxy.cut.afterBytes) {
          const head = chunk.subarray(0, Math.max(0, proxy.cut.afterBytes - sent));
          count(head.length);
          yield head;
          throw new Error('cut by the test proxy');
        }
        count(chunk.length);
        yield chunk;
      }
    };
    await pipeline(answer, pace, res);
  }

  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return Object.assign(proxy, { endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
}

/** `/bucket/some/key?x-id=GetObject` → `some/key`; undefined for bucket-level requests (listings). */
function objectKey(req: IncomingMessage, bucket: string): string | undefined {
  const path = new URL(req.url ?? '/', 'http://proxy').pathname;
  const prefix = `/${bucket}/`;
  return path.startsWith(prefix) ? decodeURIComponent(path.slice(prefix.length)) : undefined;
}

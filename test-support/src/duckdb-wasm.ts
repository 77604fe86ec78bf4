/**
 * DuckDB-Wasm in real Chromium, for tests that read the service the way a browser page does. A
 * small static server on its own port (so the service is a different origin: CORS applies) serves
 * a page per DuckDB-Wasm version, loading the library, its worker and its wasm from the packages'
 * own files in node_modules: no CDN, no network.
 *
 * Two versions, because each reads what the other cannot offline: 1.28.0 has Parquet built in
 * (1.32 downloads its Parquet extension at run time), and 1.32 attaches a remote `service.db`.
 */
import { createReadStream, existsSync, statSync } from 'node:fs';
import { type Server, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { launchChromium } from './browser.ts';

export type DuckDbWasmVersion = '1.28' | '1.32';

const ROOT = join(import.meta.dirname, '..', '..', 'node_modules');

/** URL prefix → folder. Each version gets the Apache Arrow it was built against. */
const MOUNTS: Record<string, string> = {
  '/duckdb-1.28/': join(ROOT, 'duckdb-wasm-128/dist'),
  '/duckdb-1.32/': join(ROOT, 'duckdb-wasm-132/dist'),
  '/arrow-1.28/': join(ROOT, 'apache-arrow'),
  '/arrow-1.32/': join(ROOT, 'duckdb-wasm-132/node_modules/apache-arrow'),
  '/flatbuffers-1.28/': join(ROOT, 'flatbuffers/mjs'),
  '/flatbuffers-1.32/': join(ROOT, 'duckdb-wasm-132/node_modules/flatbuffers/mjs'),
  '/tslib/': join(ROOT, 'tslib'),
};

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.wasm': 'application/wasm',
  '.map': 'application/json',
};

function pageHtml(version: DuckDbWasmVersion): string {
  const imports = {
    'apache-arrow': `/arrow-${version}/Arrow.dom.mjs`,
    flatbuffers: `/flatbuffers-${version}/flatbuffers.js`,
    tslib: '/tslib/tslib.es6.mjs',
  };
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>DuckDB-Wasm ${version}</title>
<script type="importmap">${JSON.stringify({ imports })}</script>
<script type="module">
import * as duckdb from '/duckdb-${version}/duckdb-browser.mjs';
const worker = new Worker('/duckdb-${version}/duckdb-browser-eh.worker.js');
const db = new duckdb.AsyncDuckDB(new duckdb.VoidLogger(), worker);
await db.instantiate('/duckdb-${version}/duckdb-eh.wasm');
const conn = await db.connect();
const plain = (value) => JSON.parse(JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? Number(v) : v)));
// Rows as plain objects; an error as its message, so the test can assert on what DuckDB reports.
window.sql = async (text) => {
  try {
    const table = await conn.query(text);
    return { rows: plain(table.toArray().map((row) => row.toJSON())) };
  } catch (error) {
    return { error: String(error && error.message ? error.message : error) };
  }
};
window.duckdbReady = true;
</script></head><body></body></html>`;
}

export interface DuckDbWasmPages {
  /** The static server's origin (the page's origin). */
  readonly origin: string;
  /** A page with the given version loaded and ready to run SQL. */
  open(version: DuckDbWasmVersion): Promise<DuckDbWasmPage>;
  close(): Promise<void>;
}

interface PageGlobals {
  duckdbReady?: boolean;
  sql(text: string): Promise<{ rows?: Record<string, unknown>[]; error?: string }>;
}

export interface DuckDbWasmPage {
  /** `fetch` from the page (its origin, its CORS rules): the status and body, or the network error. */
  fetch(url: string): Promise<{ status?: number; body?: string; error?: string }>;
  /** Runs SQL in DuckDB-Wasm; rows as plain objects, or DuckDB's error message. */
  sql(text: string): Promise<{ rows?: Record<string, unknown>[]; error?: string }>;
}

export async function startDuckDbWasmPages(): Promise<DuckDbWasmPages> {
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://page').pathname);
    const version = /^\/(1\.28|1\.32)\.html$/.exec(path)?.[1] as DuckDbWasmVersion | undefined;
    if (version) {
      res.writeHead(200, { 'content-type': TYPES['.html']! }).end(pageHtml(version));
      return;
    }
    const file = fileFor(path);
    if (!file) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'content-length': statSync(file).size });
    createReadStream(file).pipe(res);
  });
  const origin = await listenOn(server);
  let browser: BrowserContext | undefined;
  return {
    origin,
    async open(version) {
      browser ??= await launchChromium();
      const page: Page = await browser.newPage();
      await page.goto(`${origin}/${version}.html`);
      // These callbacks run in the page, where the page's script defined `duckdbReady` and `sql`.
      await page.waitForFunction(() => (globalThis as unknown as PageGlobals).duckdbReady === true, undefined, { timeout: 60_000 });
      return {
        sql: (text) => page.evaluate((q) => (globalThis as unknown as PageGlobals).sql(q), text),
        fetch: (url) =>
          page.evaluate(async (u) => {
            try {
              const res = await fetch(u);
              return { status: res.status, body: await res.text() };
            } catch (error) {
              return { error: String(error) };
            }
          }, url),
      };
    },
    async close() {
      await browser?.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
    },
  };
}

/** A file under one of the mounts; nothing outside them (no `..`). */
function fileFor(path: string): string | undefined {
  for (const [prefix, folder] of Object.entries(MOUNTS)) {
    if (!path.startsWith(prefix)) continue;
    const file = normalize(join(folder, path.slice(prefix.length)));
    if (!file.startsWith(folder) || !existsSync(file) || !statSync(file).isFile()) return undefined;
    return file;
  }
  return undefined;
}

function listenOn(server: Server): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
  });
}

/** One request a client made, as the recording proxy saw it. */
export interface RecordedRequest {
  readonly method: string;
  /** Path and query, with `token=` redacted. */
  readonly url: string;
  readonly range: string | undefined;
  readonly status: number;
  readonly bodyBytes: number;
  readonly creditCost: string | undefined;
  readonly creditsRemaining: string | undefined;
}

export interface RecordingProxy {
  /** Where clients should send their requests instead of `target`. */
  readonly url: string;
  readonly requests: RecordedRequest[];
  close(): Promise<void>;
}

/**
 * A transparent HTTP proxy in front of the service that records every request a client makes
 * (method, range, status, body bytes and the billing headers), so a test can see the exact sequence
 * of a client whose network traffic it cannot otherwise observe (a wasm worker's XHRs).
 */
export async function startRecordingProxy(target: string, options: { maxHeaderSize?: number } = {}): Promise<RecordingProxy> {
  const upstream = new URL(target);
  const requests: RecordedRequest[] = [];
  const server = createServer({ maxHeaderSize: options.maxHeaderSize }, (req, res) => {
    const forward = request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        let bodyBytes = 0;
        answer.on('data', (chunk: Buffer) => (bodyBytes += chunk.length));
        answer.once('end', () => {
          const header = (name: string) => {
            const value = answer.headers[name];
            return Array.isArray(value) ? value[0] : value;
          };
          requests.push({
            method: req.method ?? 'GET',
            url: (req.url ?? '').replace(/([?&]token=)[^&]*/g, '$1[redacted]'),
            range: req.headers.range,
            status: answer.statusCode ?? 0,
            bodyBytes,
            creditCost: header('x-credit-cost'),
            creditsRemaining: header('x-credits-remaining'),
          });
        });
        answer.pipe(res);
      },
    );
    forward.once('error', () => res.destroy());
    req.pipe(forward);
  });
  const url = await listenOn(server);
  return {
    url,
    requests,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
    },
  };
}

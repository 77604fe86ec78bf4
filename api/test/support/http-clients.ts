/**
 * Real HTTP clients for the file routes, shared by the SQL and export tests: curl (system binary)
 * and hyparquet (an independent Parquet reader) with a request counter.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { zstdDecompressSync } from 'node:zlib';
import { asyncBufferFromUrl, parquetReadObjects } from 'hyparquet';

const run = promisify(execFile);

export interface CurlResult {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: Buffer;
}

/** `curl -s -D - …`: async, since the local S3 server shares this process's event loop. */
export async function curl(url: string, args: readonly string[]): Promise<CurlResult> {
  // -I prints the headers itself; -D - would print them a second time.
  const dump = args.includes('-I') ? [] : ['-D', '-'];
  const { stdout } = await run('curl', ['-s', ...dump, ...args, url], { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 });
  const split = stdout.indexOf('\r\n\r\n');
  const head = stdout.subarray(0, split).toString('latin1').split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of head.slice(1)) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(head[0]!.split(' ')[1]), headers, body: stdout.subarray(split + 4) };
}

/** Reads a Parquet file over HTTP the way hyparquet does (HEAD, then range GETs); counts the requests. */
export async function readParquetOverHttp(url: string): Promise<{ rows: Record<string, unknown>[]; requests: { method: string; range: string | null; status: number }[] }> {
  const requests: { method: string; range: string | null; status: number }[] = [];
  const counting = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const res = await fetch(input, init);
    requests.push({ method: init?.method ?? 'GET', range: new Headers(init?.headers).get('range'), status: res.status });
    return res;
  };
  const file = await asyncBufferFromUrl({ url, fetch: counting });
  // The runner writes ZSTD pages; hyparquet ships only Snappy, and Node has zstd built in.
  const compressors = { ZSTD: (input: Uint8Array) => new Uint8Array(zstdDecompressSync(input)) };
  const rows = (await parquetReadObjects({ file, compressors })) as Record<string, unknown>[];
  return { rows, requests };
}

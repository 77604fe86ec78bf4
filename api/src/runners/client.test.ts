/**
 * Failover rules of the runner client over real sockets: a refused connection moves on to the next
 * runner; a connection that breaks after the request was sent does not (the query may be running).
 */
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { StaticRunnerPool } from './pool.ts';
import { TEST_RUNNER_TOKEN } from '@uda/test-support/runner-harness';
import { RunnerError } from '@uda/shared/runner-contract';
import { RunnerClient, rowsOf } from './client.ts';

let refusedUrl: string;
let oldRunnerUrl: string;
let oldRunner: Server;
const resetting: Server[] = [];
const resettingUrls: string[] = [];
let resetHits = 0;

async function listen(server: Server): Promise<string> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  const closed = createServer();
  refusedUrl = await listen(closed);
  closed.close();
  for (let i = 0; i < 2; i++) {
    const server = createServer((req) => {
      resetHits++;
      req.socket.destroy();
    });
    resetting.push(server);
    resettingUrls.push(await listen(server));
  }
  // A runner from before the result envelope: plain JSON with the rows parsed, whatever the Accept.
  oldRunner = createServer((_req, res) => {
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.end(JSON.stringify({ cached: false, format: 'json', result: META, rows: [{ title: 'Ulysses', n: 1 }] }));
  });
  oldRunnerUrl = await listen(oldRunner);
});

afterAll(() => {
  for (const server of resetting) server.close();
  oldRunner.close();
});

function client(urls: string[]): RunnerClient {
  return new RunnerClient({ pool: new StaticRunnerPool(urls), requestTimeoutMs: 5000, unavailableRetryAfterSeconds: 7, token: TEST_RUNNER_TOKEN });
}

const META = {
  queryId: randomUUID(),
  rowCount: 1,
  truncated: false,
  sqlExecuted: 'SELECT title, 1 AS n FROM gutenberg LIMIT 1',
  columns: [{ name: 'title', type: 'VARCHAR' }, { name: 'n', type: 'INTEGER' }],
  tables: ['gutenberg'],
  rowsBySource: { gutenberg: 1 },
  dataVersion: 'v1',
  createdAt: new Date().toISOString(),
  expiresAt: Date.now() + 300_000,
  objects: { parquet: { key: 'results/x/1/result.parquet', size: 10, etag: 'e', contentType: 'application/vnd.apache.parquet' } },
};

const request = () => ({ queryId: randomUUID(), sql: 'SELECT 1', format: 'json' as const, datasets: [] });

describe('RunnerClient', () => {
  it('503 QUERY_BACKEND_UNAVAILABLE with Retry-After when no runner is ready', async () => {
    await expect(client([]).runQuery(request())).rejects.toMatchObject({ code: 'QUERY_BACKEND_UNAVAILABLE', retryAfterSeconds: 7 });
  });

  it('moves past refused connections, and fails when every runner refuses', async () => {
    await expect(client([refusedUrl, refusedUrl.replace(/:\d+$/, ':1')]).runQuery(request())).rejects.toBeInstanceOf(RunnerError);
  });

  it('does not retry elsewhere once the request reached a runner that then died', async () => {
    resetHits = 0;
    // Two runners that accept and then drop the connection: only the first one tried may be hit.
    const outcome = client(resettingUrls).runQuery(request());
    await expect(outcome).rejects.toMatchObject({ code: 'QUERY_BACKEND_UNAVAILABLE' });
    expect(resetHits).toBe(1);
  });

  it('reads an older runner\'s plain JSON answer during a rolling deploy, rows included', async () => {
    const result = await client([oldRunnerUrl]).runQuery(request());
    expect(result).toMatchObject({ cached: false, format: 'json', result: META });
    expect(rowsOf(result)).toEqual([{ title: 'Ulysses', n: 1 }]);
  });
});

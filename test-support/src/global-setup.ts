/**
 * Makes sure the real services the tests need are reachable before any test runs:
 * - S3: `S3_ENDPOINT` from the environment (CI starts OpenStack Swift with s3api); when unset, an
 *   in-process s3rver on a random loopback port, for fast local runs.
 * - PostgreSQL and Redis: checked only, never started here (`.ci/run` starts them).
 */
import { createConnection } from 'node:net';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';

declare global {
  var __S3RVER__: { close(): Promise<void> } | undefined;
}

export default async function globalSetup(): Promise<void> {
  if (!process.env.S3_ENDPOINT) await startLocalS3();
  process.env.TEST_DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/postgres';
  process.env.TEST_REDIS_URL ??= 'redis://127.0.0.1:6379';
  await mustReach('PostgreSQL', process.env.TEST_DATABASE_URL);
  await mustReach('Redis', process.env.TEST_REDIS_URL);
}

async function startLocalS3(): Promise<void> {
  const directory = await mkdtemp(join(tmpdir(), 'uda-s3rver-'));
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory });
  const { port } = (await server.run()) as { port: number };
  globalThis.__S3RVER__ = server;
  process.env.S3_ENDPOINT = `http://127.0.0.1:${port}`;
  process.env.S3_ACCESS_KEY_ID = 'S3RVER';
  process.env.S3_SECRET_ACCESS_KEY = 'S3RVER';
  process.env.S3_REGION = 'us-east-1';
  process.env.S3_FORCE_PATH_STYLE = 'true';
}

async function mustReach(name: string, url: string): Promise<void> {
  const { hostname, port } = new URL(url);
  await new Promise<void>((resolve, reject) => {
    const socket = createConnection({ host: hostname, port: Number(port) });
    socket.setTimeout(3000);
    socket.once('connect', () => (socket.end(), resolve()));
    const fail = () => (socket.destroy(), reject(new Error(`${name} is not reachable at ${url}; run .ci/run or start it`)));
    socket.once('error', fail);
    socket.once('timeout', fail);
  });
}

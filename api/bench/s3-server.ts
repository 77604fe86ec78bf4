/**
 * A local S3-compatible server (s3rver) in its own process for `sql.bench.ts`, so serving bytes
 * does not share a CPU with the client. Prints one JSON line with the endpoint.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';

const directory = await mkdtemp(join(tmpdir(), 'uda-bench-s3-'));
const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory });
const { port } = (await server.run()) as { port: number };
process.stdout.write(`${JSON.stringify({ endpoint: `http://127.0.0.1:${port}`, directory })}\n`);

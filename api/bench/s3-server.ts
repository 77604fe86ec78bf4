/**
 * A local S3-compatible server (s3rver) in its own process for `sql.bench.ts` and `npm run load`,
 * so serving bytes does not share a CPU with the client. Prints one JSON line with the endpoint.
 * `S3RVER_PORT` and `S3RVER_DIRECTORY` start it again where an earlier one was (the load test's
 * `s3-down` fault stops it and brings it back with its objects).
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';

const directory = process.env.S3RVER_DIRECTORY || (await mkdtemp(join(tmpdir(), 'uda-bench-s3-')));
const server = new S3rver({ port: Number(process.env.S3RVER_PORT || 0), address: '127.0.0.1', silent: true, directory });
const { port } = (await server.run()) as { port: number };
process.stdout.write(`${JSON.stringify({ endpoint: `http://127.0.0.1:${port}`, directory })}\n`);

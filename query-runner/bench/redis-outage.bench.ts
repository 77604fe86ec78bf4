/**
 * `npm run bench:redis-outage`: how long the runner's coordination takes to answer once Redis is
 * gone (it falls back to the runner's own locks and index). Starts a private redis-server, stores
 * one result, kills Redis, then times index reads and lock takes. Prints the figures.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { type AddressInfo, createServer } from 'node:net';
import { createRedisCoordination } from '../src/coordination-redis.ts';

const ROUNDS = 20;

const port = await new Promise<number>((resolve) => {
  const probe = createServer().listen(0, '127.0.0.1', () => {
    const { port: free } = probe.address() as AddressInfo;
    probe.close(() => resolve(free));
  });
});
const server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
await new Promise((resolve) => setTimeout(resolve, 300));
const coordination = createRedisCoordination(`redis://127.0.0.1:${port}`, 'bench:outage:');
await coordination.index.get('warm-up');
server.kill('SIGKILL');
await new Promise((resolve) => server.once('exit', resolve));

const timings: number[] = [];
for (let i = 0; i < ROUNDS; i++) {
  const start = performance.now();
  await coordination.index.get(randomUUID());
  const attempt = await coordination.locks.acquire(randomUUID(), 45_000);
  if (attempt.acquired) await attempt.lock.release();
  timings.push(performance.now() - start);
}
await coordination.close();
timings.sort((a, b) => a - b);
const at = (q: number) => timings[Math.min(timings.length - 1, Math.floor(q * timings.length))]!.toFixed(1);
console.log(`redis down: index read + lock take + release, ${ROUNDS} rounds: p50 ${at(0.5)} ms, p95 ${at(0.95)} ms, max ${at(1)} ms`);
process.exit(0);

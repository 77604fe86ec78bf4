/**
 * The servers `gateway.bench.ts` measures, in their own process so autocannon doesn't steal their
 * CPU: a bare Express app, and the same handler behind the full chain with real PostgreSQL and
 * Redis. Prints one JSON line with the URLs and the key, then serves until killed.
 */
import { Socket } from 'node:net';
import express, { type Request, type Response } from 'express';
import { buildApp } from '../src/app.ts';
import { deliverCharged, holdCredit, holdOf, payerOf, setCreditHeaders } from '../src/billing/index.ts';
import { benchApiConfig } from './support.ts';
import { migrate, openDb } from '../src/db/index.ts';
import { DEFAULT_LIMITS } from '../src/limits.ts';
import { type LookupEnvelope, lookupEnvelopeJson } from '../src/lookups/settle.ts';
import { sendJson } from '../src/routes/send-json.ts';
import { listen } from '../src/server.ts';
import { buildServices } from '../src/services.ts';
import type { RouteDef } from '../src/routes/types.ts';
import type { Services } from '../src/services.ts';

const [databaseUrl = '', redisUrl = ''] = process.argv.slice(2);
/** Every route's body: a lookup envelope, the answer of the routes this chain serves most. */
const FIXED: LookupEnvelope = { status: 'success', account_state: 'anonymous', data: { source: 'bench', query: 'hello world', results: [{ n: 42 }], total: 1 } };
/**
 * The chain's routes answer as the lookup routes do: the envelope's serialiser and `sendJson`.
 * Bare Express answers with `res.json`, as an app without that work does; the bytes are the same.
 */
const answer = (req: Request, res: Response): void => sendJson(req, res, lookupEnvelopeJson(FIXED));

const bare = express();
// Configured as the API app is (`app.ts`): with Express's default ETag, bare Express hashed every
// body (SHA-1) while the chain did not, which flattered the chain's ratios.
bare.disable('x-powered-by');
bare.disable('etag');
bare.get('/bench', (_req, res) => {
  res.json(FIXED);
});
// The server process's CPU time so far (CPU per request is steadier than req/s on a shared
// machine) and its Redis round trips so far.
bare.get('/cpu', (_req, res) => {
  const { user, system } = process.cpuUsage();
  res.json({ micros: user + system, redisWrites });
});

/**
 * Redis round trips, counted where they leave: every `write` on a socket to Redis's port. ioredis
 * writes one command, or one whole pipeline or MULTI, per `write`, and each waits for its replies;
 * the limiter's cork (`writeWithTurn`) merges writes of different requests into one system call,
 * but each request still waits for its own reply, so a write is counted per call, not per syscall.
 */
let redisWrites = 0;
const redisPort = Number(new URL(redisUrl).port || 6379);
// Whether a socket goes to Redis, decided once per socket (its peer never changes).
const TO_REDIS = Symbol('to redis');
const socketWrite = Socket.prototype.write;
Socket.prototype.write = function countRedisWrites(this: Socket & { [TO_REDIS]?: boolean }, chunk: unknown, encoding?: unknown, callback?: unknown) {
  if ((this[TO_REDIS] ??= this.remotePort === redisPort)) redisWrites += 1;
  return socketWrite.call(this, chunk as string | Uint8Array, encoding as BufferEncoding, callback as () => void);
} as Socket['write'];

const config = benchApiConfig(databaseUrl, redisUrl);
const db = openDb({ databaseUrl, poolMax: config.DATABASE_POOL_MAX, dataDir: '/tmp' });
await migrate(db);
// The benchmark sends far more than 100 requests from one IP: lift the counts, keep the work.
const huge = 1_000_000_000;
const services = await buildServices(config, {
  db,
  defaultMetrics: false,
  limits: { ...DEFAULT_LIMITS, burst: { points: huge, windowS: 900 }, anonymous: { points: huge, windowS: 86_400 }, exportDaily: huge },
});
const account = await services.accounts.create({ email: 'bench@example.com', tier: 'pro' });
await services.accounts.addTopoff(account.id, 1_000_000_000_000);
const apiKey = await services.keys.create(account.id, 'bench');
const accountIds = [account.id];
/** What the charged route costs: its hold is this much too, as a lookup's is its row limit at its price. */
const CHARGED_MICRO = 4_000;
// A spread of accounts, as real traffic has: charges for different accounts don't share a row lock.
const spreadKeys: string[] = [];
for (let i = 0; i < 50; i++) {
  const other = await services.accounts.create({ email: `bench-${i}@example.com`, tier: 'pro' });
  await services.accounts.addTopoff(other.id, 1_000_000_000_000);
  spreadKeys.push(await services.keys.create(other.id, 'bench'));
  accountIds.push(other.id);
}

function benchRoutes(s: Services): RouteDef[] {
  const { guards, billing } = s;
  return [
    {
      method: 'get',
      path: '/bench/charged',
      style: 'flat',
      handlers: [
        guards.requireKey,
        guards.exportCap,
        // As the real lookup routes: the credit is held in the counter call, and the charge settles the hold.
        holdCredit({ billing, backend: s.limiterBackend, maxCostOf: () => CHARGED_MICRO }),
        async (req, res) => {
          const delivery = await billing.deliverOnce(payerOf(req)!, { costMicro: CHARGED_MICRO }, holdOf(req));
          setCreditHeaders(res, delivery.settlement);
          deliverCharged(res, delivery);
          answer(req, res);
        },
      ],
    },
    {
      // Before the reconciliation: every pending lookup written, every lease settled.
      method: 'post',
      path: '/bench/settle',
      style: 'flat',
      handlers: [
        async (_req, res) => {
          await billing.flush();
          for (const id of accountIds) await billing.settleOpenLease(id);
          res.json({ status: 'success' });
        },
      ],
    },
    { method: 'get', path: '/bench/anonymous', style: 'lookup', handlers: [guards.anonymousLimit, answer] },
    { method: 'get', path: '/bench/auth-only', style: 'flat', handlers: [guards.requireKey, guards.exportCap, answer] },
  ];
}

// The floor a chain with one counter call can reach: bare Express plus the limiter's one EVALSHA
// round trip (the burst and anonymous counters, as the anonymous chain takes them), nothing else.
const floorTakes = (req: Request) => [
  { counter: services.counters.burst, key: req.ip ?? '' },
  { counter: services.counters.anonymous, key: req.ip ?? '', refundIfOver: true },
];
bare.get('/bench/redis', async (req, res) => {
  await services.limiterBackend.take(floorTakes(req));
  res.json(FIXED);
});

const bareServer = await listen(bare, 0, '127.0.0.1');
const chainServer = await listen(buildApp(services, { extraRoutes: benchRoutes }), 0, '127.0.0.1');
process.stdout.write(`${JSON.stringify({ bare: bareServer.url, chain: chainServer.url, apiKey, spreadKeys, accountId: account.id })}\n`);
async function shutdown(): Promise<void> {
  await Promise.all([bareServer.close(), chainServer.close()]);
  bareServer.server.closeAllConnections();
  chainServer.server.closeAllConnections();
  const charged = await db('ledger').count<{ n: string }[]>({ n: '*' });
  process.stderr.write(`ledger rows written during the run: ${charged[0]?.n}\n`);
  await services.limiterBackend.close();
  await db.destroy();
  process.exit(0);
}
process.once('SIGTERM', () => void shutdown());

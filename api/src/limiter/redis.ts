import type { Socket } from 'node:net';
import { Redis } from 'ioredis';
import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis } from 'rate-limiter-flexible';
import { takeOneByOne } from './take.ts';
import { createHash } from 'node:crypto';
import type { CounterOptions, CounterTake, LimiterBackend, TakeResult, TakeRider, TakeWithRider } from './types.ts';

/**
 * Every take of a request in one EVALSHA. Per key, exactly rate-limiter-flexible's own increment
 * (so its objects keep reading the same counts): start the window if absent, add one, report the
 * count and the window's remaining ms. ARGV per key, from offset `a`: points, window seconds,
 * refund-if-over flag. Stops after the first count over its points, and says whether one was.
 */
const TAKE_COUNTERS = `
local function takeCounters(n, a)
  local out, over = {}, false
  for i = 1, n do
    local points, windowS, refund = tonumber(ARGV[a + 3 * i - 3]), ARGV[a + 3 * i - 2], ARGV[a + 3 * i - 1]
    redis.call('set', KEYS[i], 0, 'EX', windowS, 'NX')
    local consumed = redis.call('incrby', KEYS[i], 1)
    local ttl = redis.call('pttl', KEYS[i])
    if ttl == -1 then
      redis.call('expire', KEYS[i], windowS)
      ttl = 1000 * windowS
    end
    out[#out + 1] = consumed
    out[#out + 1] = ttl
    if consumed > points then
      over = true
      if refund == '1' then redis.call('decrby', KEYS[i], 1) end
      break
    end
  end
  return out, over
end
`;

const TAKE_SCRIPT = `${TAKE_COUNTERS}
return (takeCounters(#KEYS, 1))`;

/** The counters, then the rider (`TakeRider`): ARGV[1] is the number of counter keys. */
function riderScript(riderLua: string): string {
  return `${TAKE_COUNTERS}
local function rider(over, RK, RA)
${riderLua}
end
local n = tonumber(ARGV[1])
local out, over = takeCounters(n, 2)
local RK, RA = {}, {}
for i = n + 1, #KEYS do RK[#RK + 1] = KEYS[i] end
for i = 3 * n + 2, #ARGV do RA[#RA + 1] = ARGV[i] end
return {out, rider(over, RK, RA)}`;
}

interface TakeCommand {
  udaTakeCounters(keyCount: number, ...keysThenArgs: (string | number)[]): Promise<number[]>;
}

/**
 * Redis-backed counters shared by every pod. On a Redis error or while Redis is not ready, each
 * counter falls back to an in-process insurance limiter, so a limit is never lost (DECISIONS §4).
 */
export class RedisLimiterBackend implements LimiterBackend {
  readonly kind = 'redis';
  readonly client: Redis;
  readonly #prefix: string;
  readonly #owned: boolean;
  /** Each counter's insurance limiter, which `take` uses while Redis is down. */
  readonly #insurance = new Map<RateLimiterAbstract, RateLimiterMemory>();
  /** Rider text → the combined script and its SHA (a handful of riders, each fixed text). */
  readonly #riderScripts = new Map<string, { lua: string; sha: string }>();

  constructor(options: { url?: string; client?: Redis; prefix: string }) {
    this.#prefix = options.prefix;
    this.#owned = !options.client;
    this.client = options.client ?? createRedisClient(options.url ?? 'redis://127.0.0.1:6379');
    this.client.defineCommand('udaTakeCounters', { lua: TAKE_SCRIPT });
  }

  counter({ name, points, durationS }: CounterOptions) {
    const keyPrefix = `${this.#prefix}rl:${name}`;
    const insurance = new RateLimiterMemory({ keyPrefix, points, duration: durationS });
    const counter = new RateLimiterRedis({
      storeClient: this.client,
      keyPrefix,
      points,
      duration: durationS,
      rejectIfRedisNotReady: true,
      insuranceLimiter: insurance,
    });
    this.#insurance.set(counter, insurance);
    return counter;
  }

  /** One script call; on a Redis error or while it is not ready, the insurance limiters (as rate-limiter-flexible does). */
  async take(takes: readonly CounterTake[]): Promise<TakeResult[]> {
    if (takes.length === 0) return [];
    if (this.client.status === 'ready') {
      try {
        return await this.#takeInRedis(takes);
      } catch {
        // Fall through to the insurance limiters, like RateLimiterRedis on an error.
      }
    }
    return takeOneByOne(takes, (counter) => this.#insuranceOf(counter));
  }

  /**
   * The counters and the rider in one script call. On a Redis error or while it is not ready, the
   * insurance limiters count and the rider's reply is undefined: the script may or may not have
   * run, so a rider's work must be safe either way (repeatable, or expiring by itself).
   */
  async takeWith(takes: readonly CounterTake[], rider: TakeRider): Promise<TakeWithRider> {
    if (this.client.status === 'ready') {
      try {
        return await this.#takeWithInRedis(takes, rider);
      } catch {
        // Fall through to the insurance limiters.
      }
    }
    return { results: await takeOneByOne(takes, (counter) => this.#insuranceOf(counter)), reply: undefined };
  }

  async #takeWithInRedis(takes: readonly CounterTake[], rider: TakeRider): Promise<TakeWithRider> {
    const { keys, argv } = counterArgs(takes);
    const script = this.#riderScript(rider.lua);
    const allKeys = [...keys, ...rider.keys];
    const allArgs = [takes.length, ...argv, ...rider.args];
    writeWithTurn(this.client);
    let reply: [number[], unknown];
    try {
      reply = (await this.client.evalsha(script.sha, allKeys.length, ...allKeys, ...allArgs)) as [number[], unknown];
    } catch (error) {
      if (!String(error).includes('NOSCRIPT')) throw error;
      reply = (await this.client.eval(script.lua, allKeys.length, ...allKeys, ...allArgs)) as [number[], unknown];
    }
    return { results: resultsOf(takes, reply[0]), reply: reply[1] };
  }

  #riderScript(riderLua: string): { lua: string; sha: string } {
    let script = this.#riderScripts.get(riderLua);
    if (!script) {
      const lua = riderScript(riderLua);
      script = { lua, sha: createHash('sha1').update(lua).digest('hex') };
      this.#riderScripts.set(riderLua, script);
    }
    return script;
  }

  async #takeInRedis(takes: readonly CounterTake[]): Promise<TakeResult[]> {
    writeWithTurn(this.client);
    const { keys, argv } = counterArgs(takes);
    const flat = await (this.client as unknown as TakeCommand).udaTakeCounters(takes.length, ...keys, ...argv);
    return resultsOf(takes, flat);
  }

  #insuranceOf(counter: RateLimiterAbstract): RateLimiterAbstract {
    const insurance = this.#insurance.get(counter);
    if (!insurance) throw new RangeError('take() on a counter this backend did not make');
    return insurance;
  }

  /** Waits for the connection (bounded), so the first requests don't all land on the insurance limiter. */
  async ready(timeoutMs = 2_000): Promise<boolean> {
    if (this.client.status === 'ready') return true;
    return new Promise((resolve) => {
      const timer = setTimeout(() => done(false), timeoutMs);
      const done = (ok: boolean) => {
        clearTimeout(timer);
        this.client.off('ready', onReady);
        resolve(ok);
      };
      const onReady = () => done(true);
      this.client.once('ready', onReady);
    });
  }

  async close(): Promise<void> {
    if (this.#owned) this.client.disconnect();
  }
}

/** The counters' keys, and their ARGV (points, window seconds, refund flag per key). */
function counterArgs(takes: readonly CounterTake[]): { keys: string[]; argv: (string | number)[] } {
  const keys: string[] = new Array(takes.length);
  const argv: (string | number)[] = new Array(3 * takes.length);
  for (let i = 0; i < takes.length; i++) {
    const { counter, key, refundIfOver } = takes[i]!;
    keys[i] = counter.getKey(key);
    argv[3 * i] = counter.points;
    argv[3 * i + 1] = counter.duration;
    argv[3 * i + 2] = refundIfOver ? '1' : '0';
  }
  return { keys, argv };
}

/** The script's flat count/ttl pairs, one per take up to the first over its points. */
function resultsOf(takes: readonly CounterTake[], flat: readonly number[]): TakeResult[] {
  const results: TakeResult[] = [];
  for (let i = 0; i < flat.length; i += 2) {
    const consumed = Number(flat[i]);
    results.push({ consumed, msBeforeNext: Number(flat[i + 1]), over: consumed > (takes[i / 2]?.counter.points ?? 0) });
  }
  return results;
}

/**
 * Holds the connection's writes until the event loop's check phase, so the commands of all the
 * requests that arrived in one turn leave in one write (and their replies come back in one read)
 * instead of one system call and one Redis wake-up each. Nothing waits for another reply: this is
 * batching of writes, not a pipeline that queues behind the one in flight.
 */
export function writeWithTurn(client: Redis): void {
  const stream = (client as unknown as { stream?: Socket }).stream;
  if (!stream || stream.writableCorked > 0) return;
  stream.cork();
  setImmediate(() => stream.uncork());
}

/**
 * Fail fast instead of queueing: with the offline queue on, a request would wait for Redis to come
 * back instead of using the insurance limiter.
 */
export function createRedisClient(url: string): Redis {
  const client = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: 1_000,
    connectTimeout: 2_000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  });
  // ioredis emits 'error' on every failed reconnect; the limiter's insurance covers requests.
  client.on('error', () => {});
  return client;
}

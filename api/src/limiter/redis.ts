import type { Socket } from 'node:net';
import { Redis } from 'ioredis';
import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis } from 'rate-limiter-flexible';
import { dropWhenSilent } from './redis-deadline.ts';
import { type RespArgs, ScriptCall, respArgs } from './script-call.ts';
import { takeOneByOne } from './take.ts';
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

/** The rider script's ARGV[1] (how many counter keys come first), encoded once per count. */
const COUNTER_COUNTS: RespArgs[] = [];

function counterCount(n: number): RespArgs {
  return (COUNTER_COUNTS[n] ??= respArgs([n]));
}

/** A counter's ARGV (points, window seconds, refund flag), encoded once per refund flag. */
interface CounterArgv {
  readonly kept: RespArgs;
  readonly refunded: RespArgs;
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
  /** Each counter's part of the script's arguments, prebuilt (`script-call.ts`). */
  readonly #argv = new Map<RateLimiterAbstract, CounterArgv>();
  readonly #take = new ScriptCall(TAKE_SCRIPT);
  /** Rider text → the combined script (a handful of riders, each fixed text). */
  readonly #riderScripts = new Map<string, ScriptCall>();

  constructor(options: { url?: string; client?: Redis; prefix: string }) {
    this.#prefix = options.prefix;
    this.#owned = !options.client;
    this.client = options.client ?? createRedisClient(options.url ?? 'redis://127.0.0.1:6379');
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
    this.#argv.set(counter, { kept: respArgs([points, durationS, '0']), refunded: respArgs([points, durationS, '1']) });
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
    const { keys, args } = this.#counterArgs(takes);
    for (const key of rider.keys) keys.push(key);
    args.unshift(counterCount(takes.length));
    writeWithTurn(this.client);
    const reply = (await this.#riderScript(rider.lua).call(this.client, keys, args, rider.args)) as [number[], unknown];
    return { results: resultsOf(takes, reply[0]), reply: reply[1] };
  }

  #riderScript(riderLua: string): ScriptCall {
    let script = this.#riderScripts.get(riderLua);
    if (!script) {
      script = new ScriptCall(riderScript(riderLua));
      this.#riderScripts.set(riderLua, script);
    }
    return script;
  }

  async #takeInRedis(takes: readonly CounterTake[]): Promise<TakeResult[]> {
    const { keys, args } = this.#counterArgs(takes);
    writeWithTurn(this.client);
    return resultsOf(takes, (await this.#take.call(this.client, keys, args)) as number[]);
  }

  /** The counters' keys, and their prebuilt ARGV (points, window seconds, refund flag per key). */
  #counterArgs(takes: readonly CounterTake[]): { keys: string[]; args: RespArgs[] } {
    const keys: string[] = [];
    const args: RespArgs[] = [];
    for (const { counter, key, refundIfOver } of takes) {
      const argv = this.#argv.get(counter);
      if (!argv) throw new RangeError('take() on a counter this backend did not make');
      keys.push(counter.getKey(key));
      args.push(refundIfOver ? argv.refunded : argv.kept);
    }
    return { keys, args };
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
  if (!stream) return;
  if (stream.writableCorked === 0) {
    stream.cork();
    setImmediate(() => stream.uncork());
  }
  sendWaiting(client);
}

/** How long a command sent with the next write waits for one, at most (the billing flush's interval). */
export const NEXT_WRITE_WAIT_MS = 250;

/** Per client, the sends waiting for its next write (`sendWithNextWrite`), and the timer that sends them anyway. */
const waiting = new WeakMap<Redis, { sends: (() => void)[]; timer: NodeJS.Timeout }>();

/**
 * Sends `send`'s commands with the client's next write (any request's call, `writeWithTurn`), or
 * after `NEXT_WRITE_WAIT_MS` when none comes: work whose reply no answer waits for (a paid window's
 * delivery end) then costs no round trip of its own.
 */
export function sendWithNextWrite(client: Redis, send: () => void): void {
  let queued = waiting.get(client);
  if (!queued) {
    queued = { sends: [], timer: setTimeout(() => sendWaiting(client), NEXT_WRITE_WAIT_MS).unref() };
    waiting.set(client, queued);
  }
  queued.sends.push(send);
}

function sendWaiting(client: Redis): void {
  const queued = waiting.get(client);
  if (!queued) return;
  waiting.delete(client);
  clearTimeout(queued.timer);
  for (const send of queued.sends) send();
}

/** How long Redis may answer nothing while a command waits, before its callers fall back (`redis-deadline.ts`). */
export const REDIS_DEADLINE_MS = 1_000;

/**
 * Fail fast instead of queueing: with the offline queue on, a request would wait for Redis to come
 * back instead of using the insurance limiter. A Redis that hangs (accepts, answers nothing) fails
 * the waiting commands after `REDIS_DEADLINE_MS`, by one deadline on the connection rather than a
 * timer per command.
 */
export function createRedisClient(url: string): Redis {
  const client = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  });
  dropWhenSilent(client, REDIS_DEADLINE_MS);
  // ioredis emits 'error' on every failed reconnect; the limiter's insurance covers requests.
  client.on('error', () => {});
  return client;
}

/**
 * Etiquette shared through the real Redis: two RedisEtiquette instances stand for two pods.
 * Each test uses its own key prefix.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { ArxivClient } from './arxiv.ts';
import { DEFAULT_ETIQUETTE } from './etiquette.ts';
import type { EtiquetteRules } from './etiquette.ts';
import { RedisEtiquette } from './etiquette-redis.ts';
import { liveLookup } from './lookup.ts';
import { startFakeArxiv } from '../../test/fakes/arxiv.ts';
import { startFakeStackExchange } from '../../test/fakes/stackexchange.ts';
import { FAST_ETIQUETTE, expectUpstreamError, liveDeps, testHttp } from '../../test/fakes/live-deps.ts';
import type { FakeUpstream } from '../../test/fakes/upstream.ts';

let redis: Redis;
let upstream: FakeUpstream<'empty'>;
beforeAll(async () => {
  redis = new Redis(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379');
  upstream = await startFakeArxiv();
});
afterAll(async () => {
  redis.disconnect();
  await upstream.close();
});

const pods = (rules: EtiquetteRules) => {
  const prefix = `test:${randomUUID()}:`;
  return [new RedisEtiquette({ redis, prefix, rules }), new RedisEtiquette({ redis, prefix, rules })] as const;
};

describe('etiquette shared through Redis', () => {
  it('keeps arXiv calls from two pods at least 3 s apart as the upstream sees them', async () => {
    const [podA, podB] = pods(DEFAULT_ETIQUETTE);
    const client = new ArxivClient({ baseUrl: upstream.url, http: testHttp });
    upstream.requests.length = 0;
    const call = async (pod: RedisEtiquette, q: string) => (await pod.acquire('arxiv'), client.search(q, 1));
    await Promise.all([call(podA, 'a'), call(podB, 'b'), call(podA, 'c')]);
    const times = upstream.requests.map((r) => r.at).sort((x, y) => x - y);
    expect(times).toHaveLength(3);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(3_000);
    expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(3_000);
  });

  it('refuses with UPSTREAM_RATE_LIMITED and no Retry-After once the wait queue is full', async () => {
    const rules = { ...FAST_ETIQUETTE, arxiv: { intervalMs: 1_000, marginMs: 0, maxWaitMs: 1_000 } };
    const [podA, podB] = pods(rules);
    await podA.acquire('arxiv');
    const second = podB.acquire('arxiv');
    await expectUpstreamError(podA.acquire('arxiv'), 'UPSTREAM_RATE_LIMITED', 'absent');
    await second;
  });

  it('holds every pod to a backoff one pod recorded, reporting how long remains', async () => {
    const [podA, podB] = pods(FAST_ETIQUETTE);
    await podA.backoff('stackexchange', 30);
    const error = await expectUpstreamError(podB.acquire('stackexchange'), 'UPSTREAM_RATE_LIMITED');
    expect(error.retryAfterSeconds).toBeGreaterThanOrEqual(29);
    expect(error.retryAfterSeconds).toBeLessThanOrEqual(30);
    await podB.acquire('arxiv');
  });

  it('lets calls through again once a short backoff has passed', async () => {
    const [podA, podB] = pods(FAST_ETIQUETTE);
    await podA.backoff('stackexchange', 0.3);
    const started = Date.now();
    await podB.acquire('stackexchange');
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
  });

  it('makes no Stack Exchange call from any pod after an answer carrying backoff', async () => {
    const se = await startFakeStackExchange();
    const [podA, podB] = pods(FAST_ETIQUETTE);
    se.mode = 'backoff';
    await liveLookup('stackexchange', 'java', 5, liveDeps({ baseUrl: se.url, etiquette: podA }));
    se.mode = 'ok';
    await expectUpstreamError(liveLookup('stackexchange', 'python', 5, liveDeps({ baseUrl: se.url, etiquette: podB })), 'UPSTREAM_RATE_LIMITED', 10);
    await se.close();
    expect(se.requests).toHaveLength(1);
  });
});

describe('etiquette when Redis is down', () => {
  it('falls back to the per-pod limits and reports the Redis error', async () => {
    const broken = new Redis({ port: 1, lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
    const errors: unknown[] = [];
    const rules = { ...FAST_ETIQUETTE, arxiv: { intervalMs: 60_000, marginMs: 0, maxWaitMs: 0 } };
    const pod = new RedisEtiquette({ redis: broken, prefix: 'test:down:', rules, onError: (e) => errors.push(e) });
    await pod.acquire('arxiv');
    await expectUpstreamError(pod.acquire('arxiv'), 'UPSTREAM_RATE_LIMITED', 'absent');
    expect(errors.length).toBeGreaterThan(0);
    broken.disconnect();
  });
});

describe('a backoff that arrives while callers wait for their slot', () => {
  it('holds back the callers already queued on any pod', async () => {
    // The second caller's slot is a second away, so the backoff below arrives while it waits even on
    // a loaded machine (at 200 ms, a slow Redis round trip let the caller through first).
    const rules = { ...FAST_ETIQUETTE, stackexchange: { intervalMs: 1_000, marginMs: 0, maxWaitMs: 3_000 } };
    const [podA, podB] = pods(rules);
    await podA.acquire('stackexchange');
    const queued = podB.acquire('stackexchange');
    // The first call's answer carries backoff while the second caller sleeps towards its slot.
    await podA.backoff('stackexchange', 5);
    // Refused with what is left of the backoff when the caller's slot came (its wait is not timed here).
    const upstream = await expectUpstreamError(queued, 'UPSTREAM_RATE_LIMITED');
    expect(upstream.retryAfterSeconds).toBeGreaterThan(0);
    expect(upstream.retryAfterSeconds).toBeLessThanOrEqual(5);
  });
});

/** The circuit breaker on its own (a controlled clock) and in front of a failing upstream. */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CircuitBreaker } from './breaker.ts';
import { liveLookup } from './lookup.ts';
import { startFakeOpenAlex } from '../../test/fakes/openalex.ts';
import { expectUpstreamError, liveDeps } from '../../test/fakes/live-deps.ts';
import type { FakeUpstream } from '../../test/fakes/upstream.ts';

describe('circuit breaker states', () => {
  let now = 0;
  const breaker = () => new CircuitBreaker({ failureThreshold: 3, cooldownMs: 1_000, now: () => now });

  it('opens after N consecutive failures and admits nothing during the cool-down', () => {
    const b = breaker();
    b.failure();
    b.failure();
    expect(b.state()).toBe('closed');
    b.failure();
    expect(b.state()).toBe('open');
    expect(b.admit()).toBe(false);
  });

  it('half-opens after the cool-down and lets exactly one probe through', () => {
    now = 0;
    const b = breaker();
    for (let i = 0; i < 3; i++) b.failure();
    now = 1_000;
    expect(b.state()).toBe('half-open');
    expect(b.admit()).toBe(true);
    expect(b.admit()).toBe(false);
  });

  it('closes on a successful probe and reopens on a failed one', () => {
    now = 0;
    const b = breaker();
    for (let i = 0; i < 3; i++) b.failure();
    now = 1_000;
    b.admit();
    b.failure();
    expect(b.state()).toBe('open');
    now = 2_000;
    b.admit();
    b.success();
    expect(b.state()).toBe('closed');
  });

  it('a success in between resets the count', () => {
    const b = breaker();
    b.failure();
    b.failure();
    b.success();
    b.failure();
    expect(b.state()).toBe('closed');
  });
});

describe('breaker in front of an upstream', () => {
  let upstream: FakeUpstream;
  beforeAll(async () => (upstream = await startFakeOpenAlex()));
  afterAll(async () => upstream.close());

  it('stops calling an upstream that keeps failing, then probes it after the cool-down', async () => {
    const deps = liveDeps({ baseUrl: upstream.url, breakerFailureThreshold: 2, breakerCooldownMs: 200 });
    upstream.mode = 'unavailable';
    for (let i = 0; i < 2; i++) await expectUpstreamError(liveLookup('openalex', `q${i}`, 3, deps), 'UPSTREAM_UNAVAILABLE');
    expect(deps.breakers.states().openalex).toBe('open');
    await expectUpstreamError(liveLookup('openalex', 'q9', 3, deps), 'UPSTREAM_UNAVAILABLE', 'absent');
    expect(upstream.requests).toHaveLength(2);

    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(deps.breakers.states().openalex).toBe('half-open');
    upstream.mode = 'ok';
    expect((await liveLookup('openalex', 'q10', 3, deps)).results).toHaveLength(1);
    expect(deps.breakers.states().openalex).toBe('closed');
    expect(upstream.requests).toHaveLength(3);
  });

  it('does not count refusals of other kinds as outages', async () => {
    const deps = liveDeps({ baseUrl: upstream.url, breakerFailureThreshold: 2 });
    upstream.mode = 'forbidden';
    for (let i = 0; i < 3; i++) await expectUpstreamError(liveLookup('openalex', `f${i}`, 3, deps), 'UPSTREAM_FORBIDDEN');
    expect(deps.breakers.states().openalex).toBe('closed');
  });
});

/** Stack Exchange specifics: compressed answers however they are labelled, throttling and `backoff`. */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { StackExchangeClient } from './stackexchange.ts';
import { startFakeStackExchange } from '../../test/fakes/stackexchange.ts';
import type { SeMode } from '../../test/fakes/stackexchange.ts';
import { expectUpstreamError, testHttp } from '../../test/fakes/live-deps.ts';
import type { FakeUpstream } from '../../test/fakes/upstream.ts';

let upstream: FakeUpstream<SeMode>;
beforeAll(async () => (upstream = await startFakeStackExchange()));
afterAll(async () => upstream.close());

const search = (mode: SeMode) => {
  upstream.mode = mode;
  return new StackExchangeClient({ baseUrl: upstream.url, http: testHttp }).search('java', 10);
};

describe('Stack Exchange answers', () => {
  it.each<SeMode>(['gzip-unlabelled', 'deflate'])('are decoded when compressed as %s', async (mode) => {
    expect((await search(mode)).payload.results).toHaveLength(10);
  });

  it('over the size cap once decompressed are UPSTREAM_BAD_RESPONSE', async () => {
    const error = await expectUpstreamError(search('gzip-bomb'), 'UPSTREAM_BAD_RESPONSE', 'absent');
    expect(error.detail).toMatch(/body over/);
  });

  it('carry backoff seconds out to the caller', async () => {
    expect((await search('backoff')).backoffSeconds).toBe(10);
  });

  it('a throttle_violation 400 is UPSTREAM_RATE_LIMITED with the wait from its message', async () => {
    await expectUpstreamError(search('throttle'), 'UPSTREAM_RATE_LIMITED', 42);
  });

  it('a throttle_violation 400 without a stated wait has no Retry-After', async () => {
    await expectUpstreamError(search('throttle-no-wait'), 'UPSTREAM_RATE_LIMITED', 'absent');
  });

  it('another error wrapper is UPSTREAM_BAD_RESPONSE', async () => {
    await expectUpstreamError(search('bad-parameter'), 'UPSTREAM_BAD_RESPONSE', 'absent');
  });

  it('sends the app key when one is configured', async () => {
    upstream.mode = 'ok';
    await new StackExchangeClient({ baseUrl: upstream.url, key: 'app-key', http: testHttp }).search('java', 3);
    expect(upstream.requests.at(-1)!.url.searchParams.get('key')).toBe('app-key');
  });
});

/** PyPI: the exact name through the JSON API, near matches through the PEP 691 index. */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PypiClient } from './pypi.ts';
import { startFakePypi } from '../../test/fakes/pypi.ts';
import { testHttp } from '../../test/fakes/live-deps.ts';
import type { FakeUpstream } from '../../test/fakes/upstream.ts';

let upstream: FakeUpstream;
beforeAll(async () => (upstream = await startFakePypi()));
afterAll(async () => upstream.close());

const names = (results: unknown[]) => results.map((r) => (r as { name: string }).name);
const paths = () => upstream.requests.map((r) => r.url.pathname);

describe('PyPI lookups', () => {
  it('return the exact project first, then near matches from the name index', async () => {
    upstream.requests.length = 0;
    const { payload } = await new PypiClient({ baseUrl: upstream.url, http: testHttp }).search('Six', 10);
    expect(payload.results[0]).toMatchObject({ name: 'six', version: '1.16.0' });
    expect(names(payload.results)).toEqual(['six', 'sixer', 'Six.Utils', 'pysix', 'django-six']);
    expect(paths()).toContain('/pypi/six/json');
    const index = upstream.requests.find((r) => r.url.pathname === '/simple/')!;
    expect(index.headers.accept).toBe('application/vnd.pypi.simple.v1+json');
  });

  it('find near matches when no project has the exact name', async () => {
    const { payload } = await new PypiClient({ baseUrl: upstream.url, http: testHttp }).search('requets', 10);
    expect(names(payload.results)).toEqual(['requests']);
  });

  it('return nothing when neither the name nor anything near it exists', async () => {
    const { payload } = await new PypiClient({ baseUrl: upstream.url, http: testHttp }).search('qqqqqqqq', 10);
    expect(payload.results).toEqual([]);
  });

  it('reuse the name index within its TTL and fetch it again after', async () => {
    let now = 0;
    const client = new PypiClient({ baseUrl: upstream.url, http: testHttp, indexTtlMs: 1_000, now: () => now });
    upstream.requests.length = 0;
    await Promise.all([client.search('numpi', 3), client.search('sphynx', 3)]);
    await client.search('requets', 3);
    expect(paths().filter((p) => p === '/simple/')).toHaveLength(1);
    now = 2_000;
    await client.search('requets', 3);
    expect(paths().filter((p) => p === '/simple/')).toHaveLength(2);
  });

  it('keep the exact hit when only the index fails', async () => {
    const client = new PypiClient({ baseUrl: upstream.url, http: testHttp, indexMaxBytes: 10 });
    expect(names((await client.search('six', 5)).payload.results)).toEqual(['six']);
  });
});

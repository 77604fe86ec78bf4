import { describe, expect, it } from '@jest/globals';
import { type LookupEnvelope, lookupEnvelopeJson } from './settle.ts';

const envelopes: LookupEnvelope[] = [
  { status: 'success', account_state: 'anonymous', data: { source: 'pypi', query: 'numpy', results: [{ name: 'numpy', n: 1.5 }], total: 1 } },
  { status: 'success', account_state: 'authenticated', data: { source: 'arxiv', query: 'ζ "quoted" \\ 🚀', results: [], total: null } },
  {
    status: 'success',
    account_state: 'authenticated',
    data: { source: 'openalex', query: 'x', results: [null, 'a\u2028b'], total: 7, stale: { message: 'served from a stored copy', cached_at: '2026-01-01T00:00:00Z' } },
  },
];

describe('lookupEnvelopeJson', () => {
  it.each(envelopes.map((e) => [e.account_state, e.data.source, e] as const))('writes the %s %s envelope exactly as JSON.stringify', (_state, _source, envelope) => {
    expect(lookupEnvelopeJson(envelope)).toBe(JSON.stringify(envelope));
  });
});

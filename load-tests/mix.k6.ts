/**
 * k6 version of `npm run load`, for a deployed API: the same mix (it imports the route table of
 * `mix.ts`, so the two cannot drift), with thresholds that mirror the SLOs of docs/deploy.md. k6
 * cannot run in this repository's CI (see README.md); the file is type-checked with @types/k6.
 *
 *   k6 run -e BASE_URL=https://staging.example.com -e API_KEYS=service_a,service_b load-tests/mix.k6.ts
 *
 * k6 ≥ 0.57 runs TypeScript directly. API_KEYS: keys of accounts with credit (one per account).
 */
import http from 'k6/http';
import { check } from 'k6';
import { Counter } from 'k6/metrics';
import type { Options } from 'k6/options';
import type { LoadAccount } from './accounts.ts';
import { drawRoute, outcomeOf } from './mix.ts';

const baseUrl = (__ENV.BASE_URL ?? 'http://127.0.0.1:8080').replace(/\/$/, '');
const accounts: LoadAccount[] = (__ENV.API_KEYS ?? '')
  .split(',')
  .filter(Boolean)
  .map((key, index) => ({ index, id: `k6-${index}`, tier: 'pro', key, depositMicro: 0 }));
let serial = 0;
const pick = {
  account: () => accounts[Math.floor(Math.random() * accounts.length)]!,
  serial: () => ++serial * 1_000 + __VU,
};

/** Answers outside the route's expected list (the same list `npm run load` counts; goal 0). */
const unexpected = new Counter('uda_unexpected_answers');

export const options: Options = {
  scenarios: {
    mix: { executor: 'constant-vus', exec: 'mix', vus: Number(__ENV.VUS ?? 50), duration: __ENV.DURATION ?? '60s' },
  },
  thresholds: {
    uda_unexpected_answers: ['count==0'],
    // Availability SLO: 99.9% non-5xx; latency SLO: lookups p99 < 1 s (docs/deploy.md "SLOs").
    http_req_failed: ['rate<0.001'],
    'http_req_duration{route:lookup, paid}': ['p(99)<1000'],
    'http_req_duration{route:lookup, anonymous}': ['p(99)<1000'],
  },
};

// 4xx answers (404 no results, 429 allowance) are valid responses; the route's list decides.
const expectedStatuses = http.expectedStatuses({ min: 200, max: 499 });

export function mix(): void {
  if (accounts.length === 0) throw new Error('set API_KEYS to the keys of accounts with credit');
  const route = drawRoute();
  const request = route.build(pick);
  const response = http.request(request.method, `${baseUrl}${request.path}`, request.body ?? null, {
    headers: request.headers,
    tags: { route: route.name, name: route.name },
    responseCallback: expectedStatuses,
    timeout: '120s',
  });
  const answer = { status: response.status, body: typeof response.body === 'string' ? response.body : '', headers: response.headers };
  const outcome = route.outcome ? route.outcome(answer) : outcomeOf(answer);
  if (!check(response, { 'expected answer': () => route.expected.includes(outcome) })) unexpected.add(1, { route: route.name, outcome });
}

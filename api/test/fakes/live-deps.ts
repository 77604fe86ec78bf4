/** Test wiring for the live clients: short deadlines, fast etiquette, and fakes for every upstream. */
import { expect } from '@jest/globals';
import { Breakers } from '../../src/live/breaker.ts';
import { MemoryStaleCopyStore } from '../../src/live/copies.ts';
import type { StaleCopyStore } from '../../src/live/copies.ts';
import { UpstreamError } from '../../src/live/errors.ts';
import type { UpstreamCode } from '../../src/live/errors.ts';
import type { Etiquette, EtiquetteRules } from '../../src/live/etiquette.ts';
import { MemoryEtiquette } from '../../src/live/etiquette-memory.ts';
import type { HttpOptions } from '../../src/live/http.ts';
import type { LiveDeps } from '../../src/live/lookup.ts';
import { DEFAULT_LIVE_CONFIG, createLiveClients } from '../../src/live/setup.ts';
import { SingleFlight } from '../../src/live/single-flight.ts';

export const TEST_USER_AGENT = 'UnifiedDataAPI/0.1 (live lookups; mailto:tests@example.org)';

// A 1 MB cap under the fakes' 6 MB oversized answers, and a deadline far above the time to read
// 1 MB: on a loaded CI machine a large answer read against a tight deadline turned an oversized-body
// test into a timeout. The timeout tests use a fake that never answers.
export const testHttp: HttpOptions = { userAgent: TEST_USER_AGENT, timeoutMs: 3000, maxBytes: 1024 * 1024 };

const fast = { intervalMs: 0, marginMs: 0, maxWaitMs: 1_000 };
export const FAST_ETIQUETTE: EtiquetteRules = { wiki: fast, arxiv: fast, stackexchange: fast, pypi: fast, openalex: fast };

export interface DepsOptions {
  baseUrl: string;
  etiquette?: Etiquette;
  copies?: StaleCopyStore;
  breakerFailureThreshold?: number;
  breakerCooldownMs?: number;
  now?: () => Date;
  freshForMs?: number;
}

/** Every client pointed at one fake's base URL (each test uses one upstream at a time). */
export function liveDeps(options: DepsOptions): LiveDeps {
  const clients = createLiveClients({
    ...DEFAULT_LIVE_CONFIG,
    contactEmail: 'tests@example.org',
    timeoutMs: testHttp.timeoutMs,
    wikipediaBaseUrl: options.baseUrl,
    wikipediaRestBaseUrl: options.baseUrl,
    arxivBaseUrl: options.baseUrl,
    stackexchangeBaseUrl: options.baseUrl,
    pypiBaseUrl: options.baseUrl,
    openalexBaseUrl: options.baseUrl,
    openalexApiKey: 'test-key',
  });
  return {
    clients,
    etiquette: options.etiquette ?? new MemoryEtiquette({ rules: FAST_ETIQUETTE }),
    breakers: new Breakers({ failureThreshold: options.breakerFailureThreshold ?? 5, cooldownMs: options.breakerCooldownMs ?? 30_000 }),
    copies: options.copies ?? new MemoryStaleCopyStore(),
    flights: new SingleFlight(),
    ...(options.now ? { now: options.now } : {}),
    ...(options.freshForMs ? { freshForMs: options.freshForMs } : {}),
  };
}

/** Awaits a rejection and checks it is the expected upstream code, with or without Retry-After. */
export async function expectUpstreamError(work: Promise<unknown>, code: UpstreamCode, retryAfterSeconds?: number | 'absent'): Promise<UpstreamError> {
  const error = await work.then(
    () => {
      throw new Error(`expected ${code}, but the call succeeded`);
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(UpstreamError);
  const upstream = error as UpstreamError;
  expect(upstream.code).toBe(code);
  expect(upstream.message).toContain('No credit was used');
  if (retryAfterSeconds === 'absent') expect(upstream.retryAfterSeconds).toBeUndefined();
  else if (retryAfterSeconds !== undefined) expect(upstream.retryAfterSeconds).toBe(retryAfterSeconds);
  return upstream;
}

/**
 * The abuse beside the mix: each attacker account sends `queriesEach` uninterruptible
 * queries at once (a quadratic `levenshtein` in one scalar call, which only a worker kill ends),
 * and sends the next as soon as one is answered, for as long as the mix runs. It honours
 * Retry-After only up to a few seconds, as an impatient client would. Its own answers are counted
 * apart (they are refusals by design); what matters is what the other callers see meanwhile.
 * When the mix ends, the attacker hangs up: the runners must free the workers at once.
 */
import type { LoadAccount } from './accounts.ts';
import { outcomeOf } from './mix.ts';

const SLOW_SQL = "SELECT levenshtein(repeat('ab', 200000), repeat('ba', 200000)) AS d";
const MAX_BACKOFF_S = 5;

export interface Abuse {
  /** Answers the attackers got, by label (`503 QUERY_BUSY`, `408 QUERY_TIMEOUT`, `429 RUNNER_BUDGET_EXCEEDED`, …). */
  readonly outcomes: Map<string, number>;
  /** Hangs up every request in flight and waits for the loops to end. */
  stop(): Promise<void>;
}

export function startAbuse(apiUrls: string[], attackers: LoadAccount[], queriesEach: number): Abuse {
  const outcomes = new Map<string, number>();
  const hangUp = new AbortController();
  let serial = 0;
  const pause = (seconds: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, seconds * 1000);
      hangUp.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
    });
  const loop = async (account: LoadAccount, lane: number) => {
    while (!hangUp.signal.aborted) {
      const n = ++serial;
      const url = apiUrls[n % apiUrls.length]!;
      try {
        const res = await fetch(`${url}/api/v1/query`, {
          method: 'POST',
          headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json', 'x-forwarded-for': `10.250.${account.index & 255}.${1 + lane}` },
          body: JSON.stringify({ sql: `${SLOW_SQL} /* abuse ${n} */` }),
          signal: hangUp.signal,
        });
        const body = await res.text();
        const label = outcomeOf({ status: res.status, body, headers: {} });
        outcomes.set(label, (outcomes.get(label) ?? 0) + 1);
        const retryAfter = Number(res.headers.get('retry-after') ?? 0);
        if (retryAfter > 0) await pause(Math.min(retryAfter, MAX_BACKOFF_S));
      } catch {
        if (!hangUp.signal.aborted) outcomes.set('connection error', (outcomes.get('connection error') ?? 0) + 1);
      }
    }
  };
  const loops = attackers.flatMap((account) => Array.from({ length: queriesEach }, (_, lane) => loop(account, lane)));
  return {
    outcomes,
    async stop() {
      hangUp.abort();
      await Promise.all(loops);
    },
  };
}

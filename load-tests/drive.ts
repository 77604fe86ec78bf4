/**
 * Sends the mix with autocannon: one instance per API process (the two behind a round-robin
 * balancer, as the ingress spreads connections), every request drawn from the mix by `setupRequest`
 * and counted by `onResponse`.
 *
 * The run ends by draining, not by cutting: when the time is up each connection finishes the
 * request it has in flight and closes. autocannon's own `duration` destroys sockets mid-answer, so
 * a request the service charged could go uncounted and the reconciliation would be off by the
 * client's doing.
 */
import type { EventEmitter } from 'node:events';
import autocannon from 'autocannon';
import type { LoadAccount } from './accounts.ts';
import type { Observed } from './faults.ts';
import { asksToRetry, drawRoute, headerOf, type LoadRequest, outcomeOf, type Route } from './mix.ts';
import { type Tally, record } from './report.ts';

interface Context {
  route?: Route;
  request?: LoadRequest;
  /** The account whose key the request carries; none for an anonymous one. */
  account?: LoadAccount;
  sentAt?: number;
}

/** Never reached: the run ends by draining (see above). */
const UNBOUNDED = 1_000_000_000;

export interface DriveOptions {
  /** The mix ends (drains) once this settles. */
  readonly until: Promise<unknown>;
  /** Every answer and every connection error, timed (the fault tracker). */
  observe?(answer: Observed): void;
  /** When the mix started, `performance.now()`: the observed times count from it. */
  readonly startedMs: number;
}

type Instance = Promise<autocannon.Result> & EventEmitter;

export async function drive(apiUrls: string[], accounts: LoadAccount[], connections: number, tally: Tally, options: DriveOptions): Promise<number> {
  const { observe, startedMs } = options;
  const seconds = (ms: number) => (ms - startedMs) / 1000;
  let serial = 0;
  let picked: LoadAccount | undefined;
  const pick = { account: () => (picked = accounts[Math.floor(Math.random() * accounts.length)]!), serial: () => ++serial };
  const clients: { reqsMade: number; responseMax: number }[] = [];
  /** The requests of the autocannon instance that sends to API `api`. */
  const requestFor = (api: number): autocannon.Request => ({
    setupRequest: (req, context: Context) => {
      context.route = drawRoute();
      picked = undefined;
      context.request = context.route.build(pick);
      context.account = picked;
      context.sentAt = performance.now();
      return { ...req, ...context.request };
    },
    onResponse: (status, body, context: Context, headers) => {
      const { route, request: sent, sentAt, account } = context as Context & Required<Omit<Context, 'account'>>;
      const answer = { status, body, headers: headers ?? {} };
      const outcome = route.outcome ? route.outcome(answer) : outcomeOf(answer);
      const costMicro = Math.round(Number(headerOf(answer.headers, 'x-credit-cost') ?? 0) * 1_000_000);
      const now = performance.now();
      record(tally, route, { outcome, latencyMs: now - sentAt, costMicro, accountId: account?.id, tier: account?.tier, request: `${sent.method} ${sent.path}${sent.body ? ` ${sent.body}` : ''}`, body });
      const expected = route.expected.includes(outcome);
      observe?.({ route: route.name, label: outcome, expected, retryLater: asksToRetry(answer, outcome), sentS: seconds(sentAt), answeredS: seconds(now), api, accountId: account?.id, costMicro });
    },
  });
  const perApi = Math.ceil(connections / apiUrls.length);
  const runs = apiUrls.map((url, api) => {
    const instance = autocannon({
      url,
      connections: perApi,
      amount: perApi * UNBOUNDED,
      // Longer than any answer of the mix: a client-side timeout would drop an answer unread.
      timeout: 120,
      requests: [requestFor(api)],
      setupClient: (client) => clients.push(client as unknown as { reqsMade: number; responseMax: number }),
    }) as unknown as Instance;
    const events: EventEmitter = instance;
    events.on('reqError', (error: NodeJS.ErrnoException) => {
      const now = seconds(performance.now());
      const label = `connection error ${error.code ?? error.message}`;
      observe?.({ route: 'any (no answer)', label, expected: false, retryLater: false, sentS: now, answeredS: now, api, costMicro: 0, connectionError: true });
    });
    return instance;
  });
  void options.until.finally(() => {
    // autocannon closes a connection once it has made `responseMax` requests and read the answers.
    for (const client of clients) client.responseMax = client.reqsMade;
  });
  const results = await Promise.all(runs);
  for (const r of results) tally.transportErrors += r.errors;
  return seconds(performance.now());
}

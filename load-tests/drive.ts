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
import autocannon from 'autocannon';
import type { LoadAccount } from './accounts.ts';
import { drawRoute, headerOf, type LoadRequest, outcomeOf, type Route } from './mix.ts';
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

export async function drive(apiUrls: string[], accounts: LoadAccount[], connections: number, durationS: number, tally: Tally): Promise<number> {
  let serial = 0;
  let picked: LoadAccount | undefined;
  const pick = { account: () => (picked = accounts[Math.floor(Math.random() * accounts.length)]!), serial: () => ++serial };
  const clients: { reqsMade: number; responseMax: number }[] = [];
  const request: autocannon.Request = {
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
      record(tally, route, {
        outcome: route.outcome ? route.outcome(answer) : outcomeOf(answer),
        latencyMs: performance.now() - sentAt,
        costMicro: Math.round(Number(headerOf(answer.headers, 'x-credit-cost') ?? 0) * 1_000_000),
        accountId: account?.id,
        tier: account?.tier,
        request: `${sent.method} ${sent.path}${sent.body ? ` ${sent.body}` : ''}`,
        body,
      });
    },
  };
  const started = performance.now();
  const perApi = Math.ceil(connections / apiUrls.length);
  const runs = apiUrls.map((url) =>
    autocannon({
      url,
      connections: perApi,
      amount: perApi * UNBOUNDED,
      // Longer than any answer of the mix: a client-side timeout would drop an answer unread.
      timeout: 120,
      requests: [request],
      setupClient: (client) => clients.push(client as unknown as { reqsMade: number; responseMax: number }),
    }),
  );
  const timer = setTimeout(() => {
    // autocannon closes a connection once it has made `responseMax` requests and read the answers.
    for (const client of clients) client.responseMax = client.reqsMade;
  }, durationS * 1000);
  try {
    const results = await Promise.all(runs);
    for (const r of results) tally.transportErrors += r.errors;
  } finally {
    clearTimeout(timer);
  }
  return (performance.now() - started) / 1000;
}

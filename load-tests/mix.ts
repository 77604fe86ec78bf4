/**
 * The traffic mix: what a day of real callers looks like, compressed. Each route says how often it
 * is sent (weight), how one request is built, and which answers are expected; any other answer is
 * counted as unexpected (goal 0). 5xx is never expected, and a 503 `QUERY_BUSY` only where the
 * same account can send the same query twice at once (SPEC: the client honours Retry-After).
 *
 * Clients speak through the one trusted proxy hop (X-Forwarded-For): each account from addresses
 * of its own, as users are; anonymous callers from a shared pool, so some of them use up the
 * anonymous allowance (50 per day per address) and get the expected 429.
 */
import type { LoadAccount } from './accounts.ts';

export interface LoadRequest {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body?: string;
}

export interface Route {
  readonly name: string;
  readonly weight: number;
  /** Answer labels (`outcomeOf`) this route may give on a healthy service. */
  readonly expected: readonly string[];
  build(pick: Picker): LoadRequest;
  /** How an answer is labelled, when `outcomeOf` does not say it (an MCP tool failure is a 200). */
  outcome?(answer: Answer): string;
}

export interface Answer {
  readonly status: number;
  readonly body: string;
  /** Response headers, by name as the server sent it. */
  readonly headers: Record<string, unknown>;
}

export interface Picker {
  account(): LoadAccount;
  /** A fresh number per call: distinct SQL text, so a distinct query id and a real execution. */
  serial(): number;
}

const LOOKUPS = [
  ['gutenberg', 'the art of war'],
  ['gutenberg', 'pride'],
  ['census', 'york'],
  ['census', 'texas'],
  ['food', 'butter'],
  ['food', 'cheese'],
  ['pwc', 'attention'],
  ['sec', 'tsla'],
  ['sec', 'bank'],
] as const;

/** The few queries every account repeats: the first read in a window runs and charges, the rest are re-reads. */
const REPEATED_SQL = [
  'SELECT languages, count(*) AS n FROM gutenberg GROUP BY languages ORDER BY n DESC LIMIT 20',
  'SELECT category, count(*) AS n FROM food GROUP BY category ORDER BY n DESC LIMIT 20',
  'SELECT ticker, title FROM sec_companies ORDER BY cik LIMIT 25',
] as const;

const EXPORT_SOURCES = ['gutenberg', 'census', 'food', 'sec', 'pwc'] as const;
const ANONYMOUS_ADDRESSES = 1_000;

const any = <T>(list: readonly T[]): T => list[Math.floor(Math.random() * list.length)]!;
const byte = () => 1 + Math.floor(Math.random() * 254);

/** Each account calls from 254 addresses of its own /24, so no one address nears the burst limit. */
function paid(account: LoadAccount, extra: Record<string, string> = {}): Record<string, string> {
  const n = account.index;
  return { authorization: `Bearer ${account.key}`, 'x-forwarded-for': `10.${(n >> 8) & 255}.${n & 255}.${byte()}`, ...extra };
}

function anonymous(): Record<string, string> {
  const n = Math.floor(Math.random() * ANONYMOUS_ADDRESSES);
  return { 'x-forwarded-for': `172.16.${n >> 8}.${1 + (n & 255)}` };
}

const lookupPath = () => {
  const [source, keywords] = any(LOOKUPS);
  return `/${source}/${encodeURIComponent(keywords)}`;
};

const json = { 'content-type': 'application/json' };

export const ROUTES: readonly Route[] = [
  {
    name: 'lookup, anonymous',
    weight: 18,
    expected: ['200', '404', '429 REQUEST_LIMIT_EXCEEDED'],
    build: () => ({ method: 'GET', path: lookupPath(), headers: anonymous() }),
  },
  {
    name: 'lookup, paid',
    weight: 24,
    expected: ['200', '404'],
    build: (pick) => ({ method: 'GET', path: lookupPath(), headers: paid(pick.account()) }),
  },
  {
    name: 'SQL, uncached',
    weight: 8,
    expected: ['200'],
    build: (pick) => {
      const n = pick.serial();
      // The comment makes the text distinct; the validator's word list forbids "load" even there.
      const sql = `SELECT title, authors FROM gutenberg ORDER BY title LIMIT 20 OFFSET ${n % 200} /* run ${n} */`;
      return { method: 'POST', path: '/api/v1/query', headers: paid(pick.account(), json), body: JSON.stringify({ sql }) };
    },
  },
  {
    name: 'SQL, repeated (cached)',
    weight: 12,
    expected: ['200', '200 cached', '503 QUERY_BUSY'],
    build: (pick) => ({ method: 'POST', path: '/api/v1/query', headers: paid(pick.account(), json), body: JSON.stringify({ sql: any(REPEATED_SQL) }) }),
  },
  {
    name: 'Parquet range, query result',
    weight: 10,
    expected: ['206', '206 cached', '503 QUERY_BUSY'],
    build: (pick) => ({
      method: 'GET',
      path: `/api/v1/query.parquet?sql=${encodeURIComponent(any(REPEATED_SQL))}`,
      headers: paid(pick.account(), { range: 'bytes=0-1023' }),
    }),
  },
  {
    name: 'Parquet range, export',
    weight: 10,
    expected: ['206'],
    build: (pick) => ({
      method: 'GET',
      path: `/api/v1/export/${any(EXPORT_SOURCES)}?format=parquet`,
      headers: paid(pick.account(), { range: 'bytes=0-65535' }),
    }),
  },
  {
    name: 'export download',
    weight: 5,
    expected: ['200'],
    build: (pick) => ({ method: 'GET', path: `/api/v1/export/${any(EXPORT_SOURCES)}?format=${any(['parquet', 'csv'])}`, headers: paid(pick.account()) }),
  },
  {
    name: 'MCP tools/call',
    weight: 13,
    expected: ['200'],
    build: (pick) => {
      const [source, query] = any(LOOKUPS);
      const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search_service', arguments: { source, query, limit: 5 } } };
      const headers = paid(pick.account(), { ...json, accept: 'application/json, text/event-stream' });
      return { method: 'POST', path: '/mcp', headers, body: JSON.stringify(call) };
    },
    outcome: (answer) => (answer.status === 200 && isToolError(answer.body) ? '200 tool error' : outcomeOf(answer)),
  },
];

/**
 * The label an answer is counted under: the status; `cached` for a SQL result re-read within its
 * window (`X-Service-Cached: true`), so a distinct query answered from a cache shows; and the error
 * code where the body names one (`429 REQUEST_LIMIT_EXCEEDED`, `503 QUERY_BUSY`).
 */
export function outcomeOf({ status, body, headers }: Answer): string {
  if (status < 300) return headerOf(headers, 'x-service-cached') === 'true' ? `${status} cached` : String(status);
  if (status < 400 || status === 404) return String(status);
  const code = errorCode(body);
  return code ? `${status} ${code}` : String(status);
}

/**
 * An answer that tells the client to come back: a 503 with Retry-After, or an MCP tool error that
 * says when to retry (MCP's form of it). The only answer allowed beyond the usual during a fault.
 */
export function asksToRetry({ status, body, headers }: Answer, label: string): boolean {
  if (status === 503) return Number(headerOf(headers, 'retry-after') ?? 0) > 0;
  return label === '200 tool error' && /Retry after \d+ s/.test(body);
}

export function headerOf(headers: Record<string, unknown>, name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === name) return String(value);
  return undefined;
}

function isToolError(body: string): boolean {
  try {
    return (JSON.parse(body) as { result?: { isError?: boolean } }).result?.isError === true;
  } catch {
    return true;
  }
}

function errorCode(body: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as { code?: unknown; error?: unknown; data?: { code?: unknown } };
    const code = parsed.code ?? parsed.data?.code ?? parsed.error;
    return typeof code === 'string' ? code : undefined;
  } catch {
    return undefined;
  }
}

/** A route drawn at random, in proportion to its weight. */
export function drawRoute(): Route {
  const total = ROUTES.reduce((sum, r) => sum + r.weight, 0);
  let at = Math.random() * total;
  for (const route of ROUTES) if ((at -= route.weight) < 0) return route;
  return ROUTES[ROUTES.length - 1]!;
}

/**
 * The faults of `LOAD_FAULTS=`, injected one after the other while the mix runs, into the
 * servers and processes the run started itself. Each answer of the mix is told to the tracker;
 * afterwards every fault gets its window (from the injection until every route has answered as
 * expected again) and its answers: inside the window only a 503 with Retry-After (or an MCP tool
 * error saying when to retry) is allowed beside the usual answers; outside every window only the
 * usual answers are.
 */
import type { OwnPostgres, OwnRedis } from '@uda/test-support/own-servers';
import type { FaultName } from './config.ts';

/** What the faults act on: the run's own servers, and its processes by name. */
export interface FaultTargets {
  readonly redis?: OwnRedis;
  readonly postgres?: OwnPostgres;
  /** Sends the signal to the named process (`api-1`, `runner-1`, `s3rver`) and waits until it has exited. */
  signal(name: string, signal: NodeJS.Signals): Promise<void>;
  /** Starts the named process again as it was started (same ports, same settings), and waits until it is ready. */
  restart(name: string): Promise<void>;
}

/** The API and runner a fault stops: the first of each; the other keeps serving, as a second pod does. */
const VICTIM_API = 'api-1';
const VICTIM_API_INDEX = 0;

interface Fault {
  readonly what: string;
  /** Injects the fault and returns once the server or process is back (its restart done, its outage over). */
  inject(t: FaultTargets, downS: number): Promise<void>;
}

const sleep = (s: number) => new Promise((resolve) => setTimeout(resolve, s * 1000));
const restartAfter = async (t: FaultTargets, name: string, signal: NodeJS.Signals) => {
  await t.signal(name, signal);
  await t.restart(name);
};

export const FAULTS: Readonly<Record<FaultName, Fault>> = {
  'redis-flush': { what: 'FLUSHALL on the Redis (a Redis pod without persistence rescheduled)', inject: (t) => t.redis!.flush() },
  'redis-restart': { what: 'Redis stopped and started again, empty', inject: async (t) => (await t.redis!.stop(), await t.redis!.start()) },
  'redis-down': { what: 'Redis stopped, refusing connections, then started again empty', inject: async (t, s) => (await t.redis!.stop(), await sleep(s), await t.redis!.start()) },
  'pg-restart': { what: 'pg_ctl restart -m fast (every connection cut)', inject: (t) => t.postgres!.restart() },
  'api-kill': { what: `SIGKILL to ${VICTIM_API}, then started again`, inject: (t) => restartAfter(t, VICTIM_API, 'SIGKILL') },
  'api-term': { what: `SIGTERM to ${VICTIM_API} (graceful), then started again`, inject: (t) => restartAfter(t, VICTIM_API, 'SIGTERM') },
  'runner-kill': { what: 'SIGKILL to runner-1, then started again', inject: (t) => restartAfter(t, 'runner-1', 'SIGKILL') },
  's3-down': { what: 's3rver stopped, then started again with its objects', inject: async (t, s) => (await t.signal('s3rver', 'SIGTERM'), await sleep(s), await t.restart('s3rver')) },
};

/** One answer as the tracker sees it: times in seconds since the mix started. */
export interface Observed {
  readonly route: string;
  readonly label: string;
  /** The label is one the route gives on a healthy service. */
  readonly expected: boolean;
  /** 503 with Retry-After, or an MCP tool error that says when to retry. */
  readonly retryLater: boolean;
  readonly sentS: number;
  readonly answeredS: number;
  /** Which API answered (index into the API URLs). */
  readonly api: number;
  readonly accountId?: string;
  readonly costMicro: number;
  /** A request that got no answer: the connection failed or was refused. */
  readonly connectionError?: boolean;
}

interface Injected {
  readonly name: FaultName;
  readonly injectedS: number;
  /** The wall clock at the injection (the ledger's times are the database's wall clock). */
  readonly injectedAtMs: number;
  restoredS?: number;
  /** Per route, when the first answer sent after the restore came back as expected. */
  readonly firstOkS: Map<string, number>;
}

export interface FaultOutcome {
  readonly name: FaultName;
  readonly what: string;
  readonly injectedS: number;
  /** When the server or process was back. */
  readonly restoredS: number;
  /** Seconds from the restore until every route had answered as expected; undefined when one never did. */
  readonly recoverS: number | undefined;
  /** Answers inside the window that are allowed only there: 503 with Retry-After, by label. */
  readonly retryLater: Map<string, number>;
  /**
   * Requests to the stopped API that found it gone, by label: after api-term only refused connections
   * (an ingress sends them to the other pod; one cut mid-answer is unexpected), after api-kill any.
   */
  readonly refusedByStoppedApi: Map<string, number>;
  /** Anything else unexpected inside the window, by label (goal 0). */
  readonly unexpected: Map<string, number>;
}

export interface FaultReport {
  readonly faults: FaultOutcome[];
  /** Unexpected answers outside every fault's window, by label (goal 0). */
  readonly unexpectedOutside: Map<string, number>;
  /** Per account, the X-Credit-Cost an api-kill may have forgiven: answers of the killed API in its last flush interval. */
  readonly forgivableMicro: Map<string, number>;
  /** When Redis lost its data (wall clock, ms): the delivery tracker forgot every completion before (`refundsAfterRedisLoss`). */
  readonly redisLossesAtMs: number[];
}

/**
 * The API writes what it charged every 250 ms (billing's flush); a SIGKILL may lose the charges it
 * answered since its last flush, and one flush may be in flight: two intervals before the kill.
 */
const FORGIVABLE_S = 0.5;

export interface FaultTracker {
  observe(answer: Observed): void;
  /** Injects the faults one after the other, the first at `firstAtS`, each `gapS` after the last one's restore. */
  run(targets: FaultTargets, names: readonly FaultName[], options: { firstAtS: number; gapS: number; downS: number; nowS(): number; progress(line: string): void }): Promise<void>;
  report(endS: number, routes: readonly string[]): FaultReport;
}

export function newFaultTracker(): FaultTracker {
  const injected: Injected[] = [];
  const odd: Observed[] = [];
  const charged: Observed[] = [];
  return {
    observe(answer) {
      if (!answer.expected || answer.connectionError) odd.push(answer);
      if (answer.costMicro > 0 && answer.accountId) charged.push(answer);
      if (!answer.expected || answer.connectionError) return;
      for (const fault of injected) {
        if (fault.restoredS !== undefined && answer.sentS >= fault.restoredS && !fault.firstOkS.has(answer.route)) fault.firstOkS.set(answer.route, answer.answeredS);
      }
    },
    async run(targets, names, { firstAtS, gapS, downS, nowS, progress }) {
      let nextS = firstAtS;
      for (const name of names) {
        await sleep(Math.max(0, nextS - nowS()));
        const fault: Injected = { name, injectedS: nowS(), injectedAtMs: Date.now(), firstOkS: new Map() };
        injected.push(fault);
        progress(`fault ${name} at ${fault.injectedS.toFixed(1)} s: ${FAULTS[name].what}`);
        await FAULTS[name].inject(targets, downS);
        fault.restoredS = nowS();
        progress(`fault ${name}: back at ${fault.restoredS.toFixed(1)} s`);
        nextS = fault.restoredS + gapS;
      }
    },
    report(endS, routes) {
      const outcomes = injected.map((fault) => windowOf(fault, routes, endS));
      const unexpectedOutside = new Map<string, number>();
      const results = outcomes.map((o) => ({ ...o.outcome, retryLater: new Map<string, number>(), unexpected: new Map<string, number>(), refusedByStoppedApi: new Map<string, number>() }));
      for (const answer of odd) {
        const at = outcomes.findIndex((o) => answer.sentS <= o.endS && answer.answeredS >= o.outcome.injectedS);
        if (at < 0) {
          if (!answer.expected || answer.connectionError) count(unexpectedOutside, `${answer.route}: ${answer.label}`);
          continue;
        }
        const result = results[at]!;
        if (answer.retryLater) count(result.retryLater, `${answer.route}: ${answer.label}`);
        else if (foundApiGone(result.name, answer)) count(result.refusedByStoppedApi, answer.label);
        else count(result.unexpected, `${answer.route}: ${answer.label}`);
      }
      const redisLossesAtMs = injected.filter((f) => f.name.startsWith('redis-')).map((f) => f.injectedAtMs);
      return { faults: results, unexpectedOutside, forgivableMicro: forgivable(injected, charged), redisLossesAtMs };
    },
  };
}

/** A SIGKILL cuts what was in flight; a graceful SIGTERM finishes it, so only refused connections are the stop's doing. */
function foundApiGone(name: FaultName, answer: Observed): boolean {
  if (!answer.connectionError || answer.api !== VICTIM_API_INDEX) return false;
  return name === 'api-kill' || (name === 'api-term' && answer.label === 'connection error ECONNREFUSED');
}

/** The window: from the injection until every route has answered as expected after the restore (or the end). */
function windowOf(fault: Injected, routes: readonly string[], endS: number): { outcome: Omit<FaultOutcome, 'retryLater' | 'unexpected' | 'refusedByStoppedApi'>; endS: number } {
  const restoredS = fault.restoredS ?? endS;
  const firstOk = routes.map((route) => fault.firstOkS.get(route));
  const recovered = firstOk.every((s) => s !== undefined) ? Math.max(restoredS, ...(firstOk as number[])) : undefined;
  return {
    outcome: { name: fault.name, what: FAULTS[fault.name].what, injectedS: fault.injectedS, restoredS, recoverS: recovered === undefined ? undefined : recovered - restoredS },
    endS: recovered ?? endS,
  };
}

function forgivable(injected: Injected[], charged: Observed[]): Map<string, number> {
  const byAccount = new Map<string, number>();
  for (const kill of injected.filter((f) => f.name === 'api-kill')) {
    for (const answer of charged) {
      if (answer.api === VICTIM_API_INDEX && answer.answeredS <= kill.injectedS && answer.answeredS >= kill.injectedS - FORGIVABLE_S) {
        byAccount.set(answer.accountId!, (byAccount.get(answer.accountId!) ?? 0) + answer.costMicro);
      }
    }
  }
  return byAccount;
}

function count(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

/** A refund row with its charge's time: when the charge row was written, and when its refund was. */
export interface TimedRefund {
  readonly accountId: string;
  readonly micro: number;
  readonly chargedAtMs: number;
  readonly refundedAtMs: number;
}

/**
 * Per account, the refunds of charges whose completion Redis may have forgotten (DECISIONS §3
 * "Refunds"): charged before a loss of Redis's data (its row written at most a flush interval later),
 * refunded after it, when a later delivery under the same charge broke. The client was told the
 * charge and then got it back: the doubt goes the client's way. Any other refund of a charge a
 * client was told about still makes its account differ.
 */
export function refundsAfterRedisLoss(refunds: readonly TimedRefund[], lossesAtMs: readonly number[]): Map<string, number> {
  const byAccount = new Map<string, number>();
  for (const refund of refunds) {
    const forgotten = lossesAtMs.some((lossMs) => refund.chargedAtMs <= lossMs + FORGIVABLE_S * 1000 && refund.refundedAtMs > lossMs);
    if (forgotten) byAccount.set(refund.accountId, (byAccount.get(refund.accountId) ?? 0) + refund.micro);
  }
  return byAccount;
}

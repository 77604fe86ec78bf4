/**
 * Rendezvous (highest-random-weight) hashing: every API pod ranks the runners for a query id the
 * same way, so the same query goes to the same runner (its lock and local state), and a runner
 * joining or leaving moves only the queries that hash to it.
 */
import { createHash } from 'node:crypto';

function weight(queryId: string, runner: string): bigint {
  return createHash('sha256').update(queryId).update('\0').update(runner).digest().readBigUInt64BE(0);
}

/** Runners in the order to try them for this query: the owner first. */
export function rankRunners(queryId: string, runners: readonly string[]): string[] {
  return [...new Set(runners)]
    .map((runner) => ({ runner, weight: weight(queryId, runner) }))
    .sort((a, b) => (a.weight === b.weight ? a.runner.localeCompare(b.runner) : a.weight > b.weight ? -1 : 1))
    .map((entry) => entry.runner);
}

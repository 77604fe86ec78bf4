import type { Redis } from 'ioredis';

/** How many looks at the connection a deadline spans. */
const LOOKS = 4;

/**
 * A deadline on the connection instead of one per command. ioredis's `commandTimeout` starts and
 * clears a timer for every command, thousands a second on the request path; here one timer per
 * connection looks at the oldest command still waiting for its answer every `deadlineMs / 4`. When
 * the same command has been the oldest for four looks in a row, Redis has answered nothing for at
 * least `deadlineMs`: every waiting command fails at once with a timeout error (their callers take
 * the in-process fallbacks or answer 503, as they did on a command timeout), and the socket is
 * dropped, so ioredis reconnects and, until Redis answers again, callers find it not ready and skip
 * it without waiting. The event loop reads the socket between any two looks, so a loop that was
 * merely busy never passes for a silent Redis.
 */
export function dropWhenSilent(client: Redis, deadlineMs: number): void {
  let oldest: unknown;
  let looks = 0;
  const timer = setInterval(() => {
    const now = client.commandQueue.peekFront()?.command;
    if (now === undefined || now !== oldest) {
      oldest = now;
      looks = 0;
      return;
    }
    if (++looks < LOOKS) return;
    oldest = undefined;
    looks = 0;
    failWaiting(client, new Error(`Command timed out: Redis answered nothing in ${deadlineMs} ms`));
  }, deadlineMs / LOOKS);
  timer.unref();
  client.once('end', () => clearInterval(timer));
}

/** Rejects every command waiting on `client` and drops its socket (ioredis then reconnects). */
function failWaiting(client: Redis, error: Error): void {
  // ioredis's own way to fail what is queued (it also detaches the socket's reply parser).
  (client as unknown as { flushQueue(error: Error): void }).flushQueue(error);
  (client as unknown as { stream?: { destroy(): void } }).stream?.destroy();
}

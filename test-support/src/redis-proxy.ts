/**
 * A TCP proxy in front of Redis that counts round trips: every chunk the client writes is one batch
 * sent before it awaited replies (ioredis writes a turn's commands in one write, `writeWithTurn`).
 * Tests assert on the count per request; benches print it.
 */
import { type Server, type Socket, connect, createServer } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface CountingRedisProxy {
  /** `redis://127.0.0.1:<port>`: give it to the API as its REDIS_URL. */
  readonly url: string;
  /** Batches the clients have written so far. */
  readonly batches: number;
  /**
   * Each batch as text, one command a line: its name and its keys' or arguments' readable start
   * (an EVALSHA's script is named by its keys). For a test's message: which calls a request made.
   */
  readonly log: readonly string[];
  close(): Promise<void>;
}

export async function countingRedisProxy(targetUrl: string): Promise<CountingRedisProxy> {
  const target = new URL(targetUrl);
  const sockets = new Set<Socket>();
  let batches = 0;
  const log: string[] = [];
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 6379), target.hostname);
    sockets.add(client).add(upstream);
    client.on('data', (chunk) => {
      batches++;
      log.push(commandsOf(chunk));
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => client.write(chunk));
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `redis://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    get batches() {
      return batches;
    },
    log,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** The RESP commands of a chunk, one a line: the command, then its short arguments (a SHA and long texts are cut). */
function commandsOf(chunk: Buffer): string {
  const parts = chunk.toString('latin1').split('\r\n');
  const lines: string[] = [];
  for (let i = 0; i < parts.length; i++) {
    const count = /^\*(\d+)$/.exec(parts[i] ?? '');
    if (!count) continue;
    const args: string[] = [];
    for (let a = 0; a < Number(count[1]) && i + 2 < parts.length; a++, i += 2) args.push(parts[i + 2] ?? '');
    lines.push(args.map((arg) => (arg.length > 60 ? `${arg.slice(0, 12)}…` : arg)).join(' '));
  }
  return lines.join('\n');
}

/**
 * Servers of a test's own, for the tests and load runs that inject faults: a PostgreSQL cluster
 * (`initdb` + `pg_ctl` on a free port) and a Redis without persistence (as the chart runs it). The
 * machine's shared PostgreSQL and Redis are never stopped, restarted or flushed; these are.
 *
 * PostgreSQL refuses to run as root: when this process is root the cluster's commands run as the
 * `postgres` user (`runuser`), and its folder belongs to that user.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
    server.once('error', reject);
  });
}

export interface OwnPostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`, trust authentication. */
  readonly url: string;
  /** `pg_ctl restart -m fast`: every connection is cut (57P01), the server is back when it returns. */
  restart(): Promise<void>;
  /** `pg_ctl stop -m fast`: connections are cut and new ones refused until `start()`. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops the cluster and removes its folder. */
  close(): Promise<void>;
}

export async function startPostgres(): Promise<OwnPostgres> {
  const bin = postgresBin();
  const dir = await mkdtemp(join(tmpdir(), 'uda-own-pg-'));
  const port = await freePort();
  const asOwner = process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--'] : [];
  if (asOwner.length > 0) await run('chown', ['postgres:postgres', dir]);
  const pg = async (tool: string, ...args: string[]) => {
    const [command, ...rest] = [...asOwner, join(bin, tool), ...args];
    await run(command!, rest, { timeout: 120_000 });
  };
  const data = join(dir, 'data');
  await pg('initdb', '-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8');
  // The socket lives in the cluster's folder: /var/run/postgresql belongs to the shared server.
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`;
  const ctl = (...args: string[]) => pg('pg_ctl', '-D', data, '-l', join(dir, 'server.log'), '-o', options, '-w', '-t', '60', ...args);
  await ctl('start');
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    restart: () => ctl('restart', '-m', 'fast'),
    stop: () => ctl('stop', '-m', 'fast'),
    start: () => ctl('start'),
    async close() {
      await ctl('stop', '-m', 'immediate').catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The newest PostgreSQL installed (Debian's layout), or the one on PATH. */
function postgresBin(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  const found = versions.map((v) => join(root, v, 'bin')).find((dir) => existsSync(join(dir, 'initdb')));
  return found ?? '';
}

export interface OwnRedis {
  readonly url: string;
  /** FLUSHALL: what a Redis pod without persistence holds after it is rescheduled. */
  flush(): Promise<void>;
  /** SIGTERM, and connections are refused until `start()`; with no persistence every key is lost. */
  stop(): Promise<void>;
  /** Starts it again on the same port, empty. */
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function startRedis(): Promise<OwnRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    await waitFor(() => cli('PING').then((out) => out.trim() === 'PONG'), `redis-server on ${port}`);
  };
  const cli = async (...args: string[]) => (await run('redis-cli', ['-p', String(port), ...args])).stdout;
  const stop = async () => {
    const stopping = child;
    if (!stopping || stopping.exitCode !== null || stopping.signalCode !== null) return;
    await new Promise((resolve) => (stopping.once('exit', resolve), stopping.kill('SIGTERM')));
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    flush: async () => void (await cli('FLUSHALL')),
    stop,
    start,
    close: stop,
  };
}

async function waitFor(ready: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await ready().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${what} did not start`);
}

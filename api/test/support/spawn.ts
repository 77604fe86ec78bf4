import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { NODE_BIN } from '@uda/test-support/api-harness';

/** Runs a .ts script with Node 24 to completion and returns its stdout. */
export function runNode(script: string, args: string[], env: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE_BIN, [script, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (err += chunk));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${script} exited ${code}: ${err}${out}`))));
  });
}

/** Starts a long-running Node process and resolves once a stdout line matches. */
export function startNode(
  script: string,
  env: Record<string, string>,
  ready: (line: string) => boolean,
): Promise<{ child: ChildProcess; lines: string[]; line: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE_BIN, [script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    const lines: string[] = [];
    let buffered = '';
    let done = false;
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const parts = buffered.split('\n');
      buffered = parts.pop() ?? '';
      for (const line of parts) {
        lines.push(line);
        if (!done && ready(line)) {
          done = true;
          resolve({ child, lines, line });
        }
      }
    });
    let err = '';
    child.stderr.on('data', (chunk) => (err += chunk));
    child.once('exit', (code) => {
      if (!done) reject(new Error(`${script} exited ${code} before ready: ${err}${lines.join('\n')}`));
    });
  });
}

export function stopNode(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
    child.once('exit', (code) => resolve(code));
    child.kill(signal);
  });
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
    server.once('error', reject);
  });
}

/**
 * Builds the dashboard with Vite before a browser test, so a clean checkout (`.ci/run`, `npm test`)
 * serves the current sources rather than a stale or missing dist folder.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { NODE_BIN } from '@uda/test-support/api-harness';

const ROOT = join(import.meta.dirname, '..', '..');

export async function buildDashboard(): Promise<void> {
  const child = spawn(NODE_BIN, [join(ROOT, 'node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'warn'], {
    cwd: join(ROOT, 'dashboard'),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`dashboard build failed: ${stderr}`);
}

/**
 * `npm run admin -- <command>`: a thin client over the admin HTTP API that prints one JSON object.
 * Reads ADMIN_URL (default http://127.0.0.1:$ADMIN_PORT) and ADMIN_TOKEN (default: the file the
 * embedded service wrote in DATA_DIR).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadAdminCliConfig } from '../config.ts';
import { ADMIN_TOKEN_FILE } from '../secrets.ts';

export const USAGE = `Usage: npm run admin -- <command>
  account create --email E --tier free|developer|pro
  account show --account ID
  account tier --account ID --tier T
  credits topoff --account ID --usd N
  credits set --account ID --usd N
  key create --account ID --name N
  key revoke --account ID
  key list --account ID
  payments list
  payments approve --request ID
  payments reject --request ID`;

interface Call {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  body?: Record<string, string>;
}

/** Maps a command line to one admin API call; throws with the usage text on anything else. */
export function toCall(argv: readonly string[]): Call {
  const { positionals, values } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: { email: { type: 'string' }, tier: { type: 'string' }, account: { type: 'string' }, usd: { type: 'string' }, name: { type: 'string' }, request: { type: 'string' } },
  });
  const need = (name: keyof typeof values): string => {
    const value = values[name];
    if (!value) throw new Error(`--${name} is required\n${USAGE}`);
    return value;
  };
  const acct = () => `/admin/accounts/${encodeURIComponent(need('account'))}`;
  switch (positionals.join(' ')) {
    case 'account create':
      return { method: 'POST', path: '/admin/accounts', body: { email: need('email'), tier: need('tier') } };
    case 'account show':
      return { method: 'GET', path: acct() };
    case 'account tier':
      return { method: 'PUT', path: `${acct()}/tier`, body: { tier: need('tier') } };
    case 'credits topoff':
      return { method: 'POST', path: `${acct()}/topoff`, body: { usd: need('usd') } };
    case 'credits set':
      return { method: 'PUT', path: `${acct()}/grant`, body: { usd: need('usd') } };
    case 'key create':
      return { method: 'POST', path: `${acct()}/keys`, body: { name: need('name') } };
    case 'key revoke':
      return { method: 'DELETE', path: `${acct()}/keys/active` };
    case 'key list':
      return { method: 'GET', path: `${acct()}/keys` };
    case 'payments list':
      return { method: 'GET', path: '/admin/payments' };
    case 'payments approve':
      return { method: 'POST', path: `/admin/payments/${encodeURIComponent(need('request'))}/approve` };
    case 'payments reject':
      return { method: 'POST', path: `/admin/payments/${encodeURIComponent(need('request'))}/reject` };
    default:
      throw new Error(USAGE);
  }
}

/** `--help`, `-h`, `help` or no command at all: the usage text, not an error. */
export function wantsHelp(argv: readonly string[]): boolean {
  return argv.length === 0 || argv.some((arg) => arg === '--help' || arg === '-h' || arg === 'help');
}

async function main(): Promise<number> {
  if (wantsHelp(process.argv.slice(2))) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const config = loadAdminCliConfig();
  let call: Call;
  try {
    call = toCall(process.argv.slice(2));
  } catch (error) {
    process.stdout.write(`${JSON.stringify({ error: (error as Error).message })}\n`);
    return 2;
  }
  const base = config.ADMIN_URL ?? `http://127.0.0.1:${config.ADMIN_PORT}`;
  const token = config.ADMIN_TOKEN || readTokenFile(config.DATA_DIR);
  try {
    const response = await fetch(new URL(call.path, base), {
      method: call.method,
      headers: { authorization: `Bearer ${token}`, ...(call.body ? { 'content-type': 'application/json' } : {}) },
      body: call.body ? JSON.stringify(call.body) : undefined,
    });
    process.stdout.write(`${JSON.stringify(await response.json())}\n`);
    return response.ok ? 0 : 1;
  } catch (error) {
    process.stdout.write(`${JSON.stringify({ error: `admin API not reachable at ${base}: ${(error as Error).message}` })}\n`);
    return 1;
  }
}

function readTokenFile(dataDir: string): string {
  try {
    return readFileSync(join(dataDir, ADMIN_TOKEN_FILE), 'utf8').trim();
  } catch {
    return '';
  }
}

process.exitCode = await main();

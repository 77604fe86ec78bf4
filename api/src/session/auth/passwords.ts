/**
 * Dashboard passwords (DECISIONS §5): scrypt from node:crypto, a random salt per password, and the
 * parameters stored with the hash so they can be raised later without breaking old hashes.
 */
import { randomBytes, scrypt, type ScryptOptions, timingSafeEqual } from 'node:crypto';

const PARAMS = { N: 16384, r: 8, p: 1 } as const;
const KEY_LENGTH = 64;
/** scrypt needs 128·N·r bytes; give it headroom over the 32 MB default. */
const MAX_MEM = 64 * 1024 * 1024;

export { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../schemas.ts';

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, KEY_LENGTH, { ...options, maxmem: MAX_MEM }, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

/** `scrypt$N$r$p$salt$hash`, base64url parts. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, PARAMS);
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await derive(password, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

let dummy: Promise<string> | undefined;

/** A hash of nothing, so a sign-in with an unknown email costs the same scrypt time as a known one. */
export function dummyHash(): Promise<string> {
  dummy ??= hashPassword(randomBytes(16).toString('hex'));
  return dummy;
}

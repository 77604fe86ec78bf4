/**
 * Secrets for the embedded default: when the config leaves one unset, it is generated once and kept
 * in DATA_DIR (mode 0600), so it survives restarts and the processes sharing the folder agree on it.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** 32 random bytes as hex: the shape of every generated secret. */
export function randomSecret(): string {
  return randomBytes(32).toString('hex');
}

export function readOrCreateSecret(dataDir: string, file: string, make: () => string = randomSecret): string {
  const path = join(dataDir, file);
  try {
    return readFileSync(path, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  mkdirSync(dataDir, { recursive: true });
  const value = make();
  // `wx`: if two processes race, the loser fails here instead of overwriting the winner's secret.
  try {
    writeFileSync(path, `${value}\n`, { mode: 0o600, flag: 'wx' });
    return value;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return readFileSync(path, 'utf8').trim();
  }
}

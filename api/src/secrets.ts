/**
 * Secrets for the embedded default: when the config leaves them unset, they are generated once and
 * kept in DATA_DIR (mode 0600), so keys and the admin token survive restarts.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const ADMIN_TOKEN_FILE = 'admin-token';

export function readOrCreateSecret(dataDir: string, file: string, make: () => string): string {
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

export function resolveSecrets(config: {
  DATA_DIR: string;
  KEY_PEPPER?: string | undefined;
  KEY_ENCRYPTION_KEY?: string | undefined;
  ADMIN_TOKEN?: string | undefined;
}): { pepper: string; encryptionKeyHex: string; adminToken: string } {
  const hex = () => randomBytes(32).toString('hex');
  return {
    pepper: config.KEY_PEPPER ?? readOrCreateSecret(config.DATA_DIR, 'key-pepper', hex),
    encryptionKeyHex: config.KEY_ENCRYPTION_KEY ?? readOrCreateSecret(config.DATA_DIR, 'key-encryption-key', hex),
    adminToken: config.ADMIN_TOKEN ?? readOrCreateSecret(config.DATA_DIR, ADMIN_TOKEN_FILE, hex),
  };
}

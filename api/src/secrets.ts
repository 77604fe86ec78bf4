/**
 * Secrets for the embedded default: when the config leaves them unset, they are generated once and
 * kept in DATA_DIR (mode 0600), so keys and the admin token survive restarts.
 */
import { RUNNER_TOKEN_FILE } from '@uda/shared/runner-contract';
import { randomSecret, readOrCreateSecret } from '@uda/shared/secrets';

export const ADMIN_TOKEN_FILE = 'admin-token';

export function resolveSecrets(config: {
  DATA_DIR: string;
  KEY_PEPPER?: string | undefined;
  KEY_ENCRYPTION_KEY?: string | undefined;
  ADMIN_TOKEN?: string | undefined;
  QUERY_RUNNER_TOKEN?: string | undefined;
}): { pepper: string; encryptionKeyHex: string; adminToken: string; runnerToken: string } {
  const hex = randomSecret;
  return {
    pepper: config.KEY_PEPPER ?? readOrCreateSecret(config.DATA_DIR, 'key-pepper', hex),
    encryptionKeyHex: config.KEY_ENCRYPTION_KEY ?? readOrCreateSecret(config.DATA_DIR, 'key-encryption-key', hex),
    adminToken: config.ADMIN_TOKEN ?? readOrCreateSecret(config.DATA_DIR, ADMIN_TOKEN_FILE, hex),
    // The same file the runner reads when its RUNNER_TOKEN is unset: embedded processes agree on it.
    runnerToken: config.QUERY_RUNNER_TOKEN ?? readOrCreateSecret(config.DATA_DIR, RUNNER_TOKEN_FILE, hex),
  };
}

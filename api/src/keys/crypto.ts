/**
 * API key material (DECISIONS §5): `service_` + 43 random base62 characters; a peppered
 * HMAC-SHA-256 for lookup; AES-256-GCM ciphertext for Reveal; a short display prefix.
 */
import { type KeyObject, createCipheriv, createDecipheriv, createHmac, createSecretKey, randomBytes } from 'node:crypto';

export const KEY_PREFIX = 'service_';
export const LEGACY_PREFIX = 'dk_';
const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const RANDOM_CHARS = 43; // ≈ 256 bits
const SHAPE = /^(?:service_[A-Za-z0-9]{40,128}|dk_[A-Za-z0-9_-]{16,128})$/;

/** Uniform base62 by rejection sampling (248 = 4 × 62; bytes ≥ 248 are dropped). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

export function generateKey(): string {
  return KEY_PREFIX + randomBase62(RANDOM_CHARS);
}

/** Cheap shape check, so garbage never reaches the database. */
export function looksLikeKey(text: string): boolean {
  return SHAPE.test(text);
}

export function isLegacyKey(key: string): boolean {
  return key.startsWith(LEGACY_PREFIX);
}

/** What the dashboard shows: the prefix and the first four random characters. */
export function displayPrefix(key: string): string {
  const head = isLegacyKey(key) ? LEGACY_PREFIX : KEY_PREFIX;
  return key.slice(0, head.length + 4);
}

export class KeyCrypto {
  /** A KeyObject, made once: from a Buffer, every HMAC would import the key again (seen in the gateway profile). */
  readonly #pepper: KeyObject;
  readonly #aesKey: Buffer;

  constructor(options: { pepper: string; encryptionKeyHex: string }) {
    if (options.pepper.length < 32) throw new RangeError('key pepper must be at least 32 characters');
    if (!/^[0-9a-fA-F]{64}$/.test(options.encryptionKeyHex)) throw new RangeError('encryption key must be 64 hex characters');
    this.#pepper = createSecretKey(Buffer.from(options.pepper, 'utf8'));
    this.#aesKey = Buffer.from(options.encryptionKeyHex, 'hex');
  }

  lookupHash(key: string): string {
    return createHmac('sha256', this.#pepper).update(key).digest('hex');
  }

  /** `v1.<iv>.<tag>.<ciphertext>`, base64url parts. */
  encrypt(key: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#aesKey, iv);
    const body = Buffer.concat([cipher.update(key, 'utf8'), cipher.final()]);
    return ['v1', iv, cipher.getAuthTag(), body].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.');
  }

  decrypt(sealed: string): string {
    const [version, iv, tag, body] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || body === undefined) throw new Error('unknown key ciphertext format');
    const decipher = createDecipheriv('aes-256-gcm', this.#aesKey, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  }
}

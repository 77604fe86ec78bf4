import { describe, expect, it } from '@jest/globals';
import { KeyCrypto, displayPrefix, generateKey, isLegacyKey, looksLikeKey } from './crypto.ts';

const crypto = new KeyCrypto({ pepper: 'p'.repeat(32), encryptionKeyHex: 'ab'.repeat(32) });

describe('key crypto', () => {
  it('generates service_ keys with at least 40 base62 characters', () => {
    const key = generateKey();
    expect(key).toMatch(/^service_[A-Za-z0-9]{40,}$/);
    expect(looksLikeKey(key)).toBe(true);
    expect(generateKey()).not.toBe(key);
  });

  it('accepts the legacy dk_ shape and rejects garbage', () => {
    expect(looksLikeKey('dk_0123456789abcdefXYZ')).toBe(true);
    expect(isLegacyKey('dk_0123456789abcdefXYZ')).toBe(true);
    expect(looksLikeKey('service_short')).toBe(false);
    expect(looksLikeKey('Bearer x')).toBe(false);
  });

  it('hashes deterministically with the pepper', () => {
    const key = generateKey();
    expect(crypto.lookupHash(key)).toBe(crypto.lookupHash(key));
    const other = new KeyCrypto({ pepper: 'q'.repeat(32), encryptionKeyHex: 'ab'.repeat(32) });
    expect(other.lookupHash(key)).not.toBe(crypto.lookupHash(key));
  });

  it('encrypts for Reveal and detects tampering', () => {
    const key = generateKey();
    const sealed = crypto.encrypt(key);
    expect(sealed).not.toContain(key);
    expect(crypto.decrypt(sealed)).toBe(key);
    const parts = sealed.split('.');
    parts[3] = Buffer.from('tampered').toString('base64url');
    expect(() => crypto.decrypt(parts.join('.'))).toThrow();
  });

  it('shows a short display prefix', () => {
    expect(displayPrefix('service_AbCdEfGh')).toBe('service_AbCd');
    expect(displayPrefix('dk_AbCdEfGh')).toBe('dk_AbCd');
  });
});

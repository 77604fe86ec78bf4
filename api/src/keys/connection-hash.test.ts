import { describe, expect, it } from '@jest/globals';
import { hashOnConnection } from './connection-hash.ts';

/** A hash that counts its calls, to see when the remembered one answered. */
function countingHash() {
  const calls: string[] = [];
  return { calls, hash: (key: string) => (calls.push(key), `h(${key})`) };
}

describe('hashOnConnection', () => {
  it('hashes a key once per connection while the connection sends that key', () => {
    const { calls, hash } = countingHash();
    const connection = {};
    expect([1, 2, 3].map(() => hashOnConnection(connection, 'key-a', hash))).toEqual(['h(key-a)', 'h(key-a)', 'h(key-a)']);
    expect(calls).toEqual(['key-a']);
  });

  it('answers every key with its own hash when the connection changes keys', () => {
    const { calls, hash } = countingHash();
    const connection = {};
    const keys = ['key-a', 'key-b', 'key-a', 'key-a', 'key-b'];
    expect(keys.map((key) => hashOnConnection(connection, key, hash))).toEqual(keys.map((key) => `h(${key})`));
    expect(calls).toEqual(['key-a', 'key-b', 'key-a', 'key-b']);
  });

  it('keeps connections apart, and hashes every time without one', () => {
    const { calls, hash } = countingHash();
    const [first, second] = [{}, {}];
    hashOnConnection(first, 'key-a', hash);
    expect(hashOnConnection(second, 'key-b', hash)).toBe('h(key-b)');
    expect(hashOnConnection(first, 'key-a', hash)).toBe('h(key-a)');
    hashOnConnection(undefined, 'key-a', hash);
    hashOnConnection(undefined, 'key-a', hash);
    expect(calls).toEqual(['key-a', 'key-b', 'key-a', 'key-a']);
  });
});

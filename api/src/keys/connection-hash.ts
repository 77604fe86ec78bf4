/**
 * The lookup hash of the key a connection sent last. A client on a keep-alive connection sends the
 * same key with every request, and the peppered HMAC (about 2 µs of CPU) was the largest step of an
 * authenticated request the key cache answers. The plain key is held only while the connection that
 * carries it is open, beside the connection's own buffers; the process-wide cache stays keyed by
 * the hash (`cache.ts`).
 */

const LAST_KEY = Symbol('last key sent on this connection');

/** A connection (the request's socket) that may remember its last key. */
type Remembering = object & { [LAST_KEY]?: { readonly key: string; readonly hash: string } };

/** `hash(key)`, computed once per key and connection; without a connection, every time. */
export function hashOnConnection(connection: object | undefined, key: string, hash: (key: string) => string): string {
  if (connection === undefined) return hash(key);
  const last = (connection as Remembering)[LAST_KEY];
  if (last !== undefined && last.key === key) return last.hash;
  const computed = hash(key);
  (connection as Remembering)[LAST_KEY] = { key, hash: computed };
  return computed;
}

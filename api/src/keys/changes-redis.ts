import type { Redis } from 'ioredis';
import type { Logger } from '@uda/shared/logger';
import { type ChangeListener, type KeyChanges, LocalKeyChanges } from './changes.ts';

/**
 * Announcements over a Redis pub/sub channel. The subscriber has its own connection (a subscribed
 * connection can't run other commands). While it is down `connected` is false; when it comes back,
 * listeners hear `undefined` (drop everything), since announcements sent meanwhile were lost.
 */
export class RedisKeyChanges implements KeyChanges {
  readonly #publisher: Redis;
  readonly #subscriber: Redis;
  readonly #channel: string;
  readonly #local = new LocalKeyChanges();
  readonly #logger?: Logger;
  #subscribed = false;

  constructor({ redis, prefix, logger }: { redis: Redis; prefix: string; logger?: Logger }) {
    this.#publisher = redis;
    this.#channel = `${prefix}keys:changed`;
    this.#logger = logger;
    this.#subscriber = redis.duplicate({ enableOfflineQueue: true, commandTimeout: undefined });
    this.#subscriber.on('error', () => {});
    this.#subscriber.on('message', (channel: string, accountId: string) => {
      if (channel === this.#channel) this.#local.emit(accountId);
    });
    this.#subscriber.on('close', () => {
      this.#subscribed = false;
    });
    // On every (re)connection: SUBSCRIBE is idempotent, and this also covers a first attempt that failed.
    this.#subscriber.on('ready', () => void this.#subscribe());
  }

  get connected(): boolean {
    return this.#subscribed && this.#subscriber.status === 'ready';
  }

  /** Resolves once subscribed (bounded), so a fresh pod trusts its cache from the first request. */
  async ready(timeoutMs = 2_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!this.connected && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    return this.connected;
  }

  async announce(accountId: string): Promise<void> {
    await this.#local.announce(accountId);
    try {
      await this.#publisher.publish(this.#channel, accountId);
    } catch (err) {
      // Other pods are then covered by their TTL; if Redis is down for them too, by the short one.
      this.#logger?.warn({ err }, 'could not announce a key change; other pods rely on their cache TTL');
    }
  }

  listen(listener: ChangeListener): void {
    this.#local.listen(listener);
  }

  async close(): Promise<void> {
    this.#subscriber.disconnect();
  }

  /** After a reconnect, announcements sent while this pod was away are lost: drop everything. */
  async #subscribe(): Promise<void> {
    try {
      await this.#subscriber.subscribe(this.#channel);
    } catch (err) {
      this.#logger?.warn({ err }, 'key change subscription failed; cached keys are trusted for 1 s meanwhile');
      return;
    }
    if (!this.#subscribed) this.#local.emit(undefined);
    this.#subscribed = true;
  }
}

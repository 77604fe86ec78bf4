/**
 * The wallet on Redis, shared by every API pod (rules in `wallet.ts`), so one account's traffic on
 * two pods spends one lease. Each step that reads and writes is one Lua script.
 *
 * Keys (per account): `<prefix>wal:<account>` (hash: lease, partial 1|0 (opened on a later part of
 * its lease: Redis lost the earlier ones), open 1|0, unspent, held, bal, balv),
 * `<prefix>wal-hold:<account>` (hash: charge key → `<lease>|<amount>`, lease `-` once orphaned);
 * and `<prefix>wal-holds` (sorted set: `<account> <charge key>` → hold expiry ms),
 * `<prefix>wal-key:<charge key>` (a window charge's key, remembered past its flush: its lease),
 * `<prefix>wal-paid:<account>:<name>` (a re-read marker: the charge key of a paid result, for its window).
 * No charge record is kept here: each pod's journal holds the charges it reported until PostgreSQL
 * has them (`journal.ts`). Every key can be lost: the wallet is then taken anew from PostgreSQL.
 */
import type { Redis } from 'ioredis';
import type { TakeRider } from '../limiter/types.ts';
import { type BeginPart, type PaidMarkerRider, REREAD_RIDER, type RereadReply, rereadFieldsOf } from './reread-rider.ts';
import { type Script, runScript } from '../redis/scripts.ts';
import { HOLD_RIDER, MARKER_RIDER, SCRIPTS } from './wallet-redis-scripts.ts';
import type { Buckets, ChargeRecord, HoldRequest, HoldResult, PaidMarker, Release, SpendResult, Wallet } from './wallet.ts';

/** The wallet's fields its stored balance reads, here and in a paid re-read's first call (`reread-rider.ts`). */
const BALANCE_FIELDS = ['bal', 'lease', 'partial', 'open', 'unspent', 'held'];

/**
 * The whole balance from the stored buckets and the wallet's part; undefined when no buckets are
 * stored or the wallet's part is PostgreSQL's to tell (`walletPart`).
 */
function storedBalanceOf([bal, ...wallet]: readonly (string | null | undefined)[]): number | undefined {
  const available = walletPart(wallet.map((v) => v ?? null));
  return bal === null || bal === undefined || available === undefined ? undefined : Number(bal) + available;
}

export class RedisWallet implements Wallet {
  readonly local = false;
  readonly #redis: Redis;
  readonly #prefix: string;

  constructor(options: { redis: Redis; prefix: string }) {
    this.#redis = options.redis;
    this.#prefix = options.prefix;
  }

  #wallet(accountId: string): string {
    return `${this.#prefix}wal:${accountId}`;
  }

  #holds(accountId: string): string {
    return `${this.#prefix}wal-hold:${accountId}`;
  }

  #run(s: Script, keys: readonly string[], ...args: (string | number)[]): Promise<unknown> {
    return runScript(this.#redis, s, keys, ...args);
  }

  #marker(accountId: string, name: string): string {
    return `${this.#prefix}wal-paid:${accountId}:${name}`;
  }

  async spend(accountId: string, record: ChargeRecord, rememberMs = 0, marker?: PaidMarker): Promise<SpendResult> {
    // Without a marker its key is still named (a script declares every key it may touch), never written.
    const keys = [this.#wallet(accountId), `${this.#prefix}wal-key:${record.key}`, this.#marker(accountId, marker?.name ?? '')];
    const reply = (await this.#run(SCRIPTS.spend, keys, record.key, record.amountMicro, rememberMs, marker?.ttlMs ?? 0)) as [number, string, string?, string?, string?, number?];
    const [status, lease, unspent, bal, held, whole] = reply;
    if (status === 0) return { ok: false, closedLeaseId: lease || undefined };
    return { ok: true, leaseId: lease, unspentMicro: Number(unspent), heldMicro: Number(held ?? 0), bucketsMicro: bal ? Number(bal) : undefined, duplicate: status === 2, whole: whole === 1 };
  }

  async fund(accountId: string, leaseId: string, addMicro: number, buckets: Buckets, part: number): Promise<void> {
    await this.#run(SCRIPTS.fund, [this.#wallet(accountId)], leaseId, addMicro, buckets.micro, buckets.version, part);
  }

  async credit(accountId: string, leaseId: string, micro: number): Promise<void> {
    await this.#run(SCRIPTS.credit, [this.#wallet(accountId)], leaseId, micro);
  }

  async close(accountId: string, leaseId: string): Promise<void> {
    await this.#run(SCRIPTS.close, [this.#wallet(accountId)], leaseId);
  }

  async unspent(accountId: string): Promise<number> {
    const [open, unspent] = await this.#redis.hmget(this.#wallet(accountId), 'open', 'unspent');
    return open === '1' ? Number(unspent) : 0;
  }

  async storeBuckets(accountId: string, buckets: Buckets): Promise<void> {
    await this.#run(SCRIPTS.storeBuckets, [this.#wallet(accountId)], buckets.micro, buckets.version);
  }

  async openLeases(): Promise<{ accountId: string; leaseId: string }[]> {
    // Leases in Redis outlive this pod: other pods, or the reconciler at expiry, settle them.
    return [];
  }

  async paidMarker(accountId: string, name: string): Promise<string | undefined> {
    return (await this.#redis.get(this.#marker(accountId, name))) ?? undefined;
  }

  paidMarkerRider(accountId: string, name: string, begin?: BeginPart): PaidMarkerRider {
    const marker = this.#marker(accountId, name);
    if (!begin) return { lua: MARKER_RIDER, keys: [marker], args: [], read: (reply) => (typeof reply === 'string' ? { ...(reply ? { paidKey: reply } : {}), begun: false } : undefined) };
    const read = (reply: unknown): RereadReply | undefined => {
      const fields = rereadFieldsOf(reply);
      if (!fields?.marker) return fields && { begun: false };
      const balanceMicro = storedBalanceOf(fields.fields);
      return { paidKey: fields.marker, begun: fields.begun, ...(balanceMicro === undefined ? {} : { balanceMicro }) };
    };
    return { lua: REREAD_RIDER, keys: [marker, this.#wallet(accountId), ...begin.keys], args: [...begin.args, ...BALANCE_FIELDS], read };
  }

  async markPaid(accountId: string, marker: PaidMarker, chargeKey: string): Promise<void> {
    await this.#redis.set(this.#marker(accountId, marker.name), chargeKey, 'PX', marker.ttlMs);
  }

  async forgetPaid(accountId: string, name: string): Promise<void> {
    await this.#redis.del(this.#marker(accountId, name));
  }

  async spent(accountId: string, key: string): Promise<boolean> {
    return (await this.#redis.exists(`${this.#prefix}wal-key:${key}`)) === 1;
  }

  async available(accountId: string): Promise<number | undefined> {
    return walletPart(await this.#redis.hmget(this.#wallet(accountId), 'lease', 'partial', 'open', 'unspent', 'held'));
  }

  async storedBalance(accountId: string): Promise<number | undefined> {
    return storedBalanceOf(await this.#redis.hmget(this.#wallet(accountId), ...BALANCE_FIELDS));
  }

  holdRider(accountId: string, hold: HoldRequest, releases: readonly Release[]): TakeRider {
    return { lua: HOLD_RIDER, keys: this.#holdKeys(accountId), args: this.#holdArgs(accountId, hold, releases) };
  }

  holdReply(reply: unknown): HoldResult {
    const [status, lease, unspent, held, bal, whole] = reply as [number, string, number?, number?, string?, number?];
    if (status !== 1) return { ok: false, leased: Boolean(lease) };
    return { ok: true, leaseId: lease, unspentMicro: Number(unspent), heldMicro: Number(held), bucketsMicro: bal ? Number(bal) : undefined, whole: whole === 1 };
  }

  async hold(accountId: string, hold: HoldRequest): Promise<HoldResult> {
    return this.holdReply(await this.#run(SCRIPTS.hold, this.#holdKeys(accountId), ...this.#holdArgs(accountId, hold, [])));
  }

  async release(releases: readonly Release[]): Promise<void> {
    if (releases.length) await this.#run(SCRIPTS.release, [], this.#prefix, ...releaseArgs(releases));
  }

  async reapHolds(nowMs: number): Promise<string[]> {
    return (await this.#run(SCRIPTS.reapHolds, [`${this.#prefix}wal-holds`], nowMs, this.#prefix)) as string[];
  }

  async held(accountId: string, leaseId: string): Promise<number> {
    const [lease, held] = await this.#redis.hmget(this.#wallet(accountId), 'lease', 'held');
    return lease === leaseId ? Number(held ?? 0) : 0;
  }

  async orphanHolds(accountId: string, leaseId: string): Promise<void> {
    await this.#run(SCRIPTS.orphan, [this.#wallet(accountId), this.#holds(accountId)], leaseId);
  }

  #holdKeys(accountId: string): string[] {
    return [this.#wallet(accountId), this.#holds(accountId), `${this.#prefix}wal-holds`];
  }

  #holdArgs(accountId: string, hold: HoldRequest, releases: readonly Release[]): (string | number)[] {
    return [this.#prefix, accountId, hold.key, hold.amountMicro, hold.expiresAtMs, ...releaseArgs(releases)];
  }
}

/** The wallet's part of the balance from its hash's lease, partial, open, unspent, held: undefined unless it holds the whole lease. */
function walletPart([lease, partial, open, unspent, held]: (string | null)[]): number | undefined {
  if (lease === null || lease === undefined || partial === '1') return undefined;
  return open === '1' ? Number(unspent) + Number(held ?? 0) : 0;
}

/** Three short arguments per release: account, key, charge (the record itself stays in the pod's journal). */
function releaseArgs(releases: readonly Release[]): (string | number)[] {
  const args: (string | number)[] = [];
  for (const { accountId, record } of releases) args.push(accountId, record.key, record.amountMicro);
  return args;
}

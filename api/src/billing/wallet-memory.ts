/**
 * The embedded default's wallet (`Wallet`, rules in `wallet.ts`): one process, so plain maps. A
 * process that restarts loses it as a Redis flush loses the shared one: its leases' unspent credit
 * is then PostgreSQL's to tell, until they settle.
 */
import type { Buckets, ChargeRecord, HoldRequest, HoldResult, PaidMarker, Release, SpendResult, Wallet } from './wallet.ts';

/** Past this many remembered window keys, the memory wallet drops the expired ones. */
const REMEMBERED_KEYS_MAX = 100_000;

/** A remembered value (a window key's lease, a marker's charge key) and until when. */
interface Remembered {
  readonly value: string;
  readonly untilMs: number;
}

function remember(memory: Map<string, Remembered>, key: string, value: string, forMs: number): void {
  // Bounded: past this many keys the expired ones go (a day of one process's window charges).
  if (memory.size >= REMEMBERED_KEYS_MAX) for (const [k, entry] of memory) if (entry.untilMs <= Date.now()) memory.delete(k);
  memory.set(key, { value, untilMs: Date.now() + forMs });
}

function markerId(accountId: string, name: string): string {
  return `${accountId}\n${name}`;
}

interface MemoryAccount {
  leaseId?: string;
  /** Opened on a later part of its lease: the earlier parts were lost (a restarted process). */
  partial: boolean;
  open: boolean;
  unspentMicro: number;
  heldMicro: number;
  buckets?: Buckets;
}

/** The embedded default's wallet: one process, so plain maps. Same rules as the Redis wallet. */
export class MemoryWallet implements Wallet {
  readonly local = true;
  readonly #accounts = new Map<string, MemoryAccount>();
  /** Charge key → its hold (`<account>`, lease or '' once orphaned, amount, expiry). */
  readonly #holds = new Map<string, { accountId: string; leaseId: string; amountMicro: number; expiresAtMs: number }>();

  /** Window charge keys spent → their lease and until when they are remembered. */
  readonly #keys = new Map<string, Remembered>();
  /** Re-read markers (`markerId`) → the charge key and until when. */
  readonly #markers = new Map<string, Remembered>();

  #remembered(key: string): string | undefined {
    const entry = this.#keys.get(key);
    return entry && entry.untilMs > Date.now() ? entry.value : undefined;
  }

  #account(accountId: string): MemoryAccount {
    let account = this.#accounts.get(accountId);
    if (!account) this.#accounts.set(accountId, (account = { partial: false, open: false, unspentMicro: 0, heldMicro: 0 }));
    return account;
  }

  async spend(accountId: string, record: ChargeRecord, rememberMs = 0, marker?: PaidMarker): Promise<SpendResult> {
    const a = this.#account(accountId);
    const bucketsMicro = a.buckets?.micro;
    const previous = rememberMs > 0 ? this.#remembered(record.key) : undefined;
    const whole = Boolean(a.leaseId) && !a.partial;
    if (previous) return { ok: true, leaseId: previous, unspentMicro: a.open ? a.unspentMicro : 0, heldMicro: a.open ? a.heldMicro : 0, bucketsMicro, duplicate: true, whole };
    if (!a.open || !a.leaseId || a.unspentMicro < record.amountMicro) return { ok: false, closedLeaseId: a.open ? undefined : a.leaseId };
    a.unspentMicro -= record.amountMicro;
    if (rememberMs > 0) remember(this.#keys, record.key, a.leaseId, rememberMs);
    if (marker) await this.markPaid(accountId, marker, record.key);
    return { ok: true, leaseId: a.leaseId, unspentMicro: a.unspentMicro, heldMicro: a.heldMicro, bucketsMicro, duplicate: false, whole };
  }

  async fund(accountId: string, leaseId: string, addMicro: number, buckets: Buckets, part: number): Promise<void> {
    const a = this.#account(accountId);
    if (a.leaseId === leaseId) {
      if (a.open) a.unspentMicro += addMicro;
    } else {
      // The previous lease was settled, its holds orphaned first.
      Object.assign(a, { leaseId, partial: part > 0, open: true, unspentMicro: addMicro, heldMicro: 0 });
    }
    await this.storeBuckets(accountId, buckets);
  }

  async credit(accountId: string, leaseId: string, micro: number): Promise<void> {
    const a = this.#account(accountId);
    if (a.open && a.leaseId === leaseId) a.unspentMicro += micro;
  }

  async close(accountId: string, leaseId: string): Promise<void> {
    const a = this.#account(accountId);
    if (a.leaseId === leaseId) a.open = false;
  }

  async unspent(accountId: string): Promise<number> {
    const a = this.#accounts.get(accountId);
    return a?.open ? a.unspentMicro : 0;
  }

  async storeBuckets(accountId: string, buckets: Buckets): Promise<void> {
    const a = this.#account(accountId);
    if (!a.buckets || a.buckets.version < buckets.version) a.buckets = buckets;
  }

  async openLeases(): Promise<{ accountId: string; leaseId: string }[]> {
    return [...this.#accounts].flatMap(([accountId, a]) => (a.open && a.leaseId ? [{ accountId, leaseId: a.leaseId }] : []));
  }

  async paidMarker(accountId: string, name: string): Promise<string | undefined> {
    const entry = this.#markers.get(markerId(accountId, name));
    return entry && entry.untilMs > Date.now() ? entry.value : undefined;
  }

  async markPaid(accountId: string, marker: PaidMarker, chargeKey: string): Promise<void> {
    remember(this.#markers, markerId(accountId, marker.name), chargeKey, marker.ttlMs);
  }

  async forgetPaid(accountId: string, name: string): Promise<void> {
    this.#markers.delete(markerId(accountId, name));
  }

  async spent(accountId: string, key: string): Promise<boolean> {
    return this.#remembered(key) !== undefined;
  }

  async available(accountId: string): Promise<number | undefined> {
    const a = this.#accounts.get(accountId);
    if (!a?.leaseId || a.partial) return undefined;
    return a.open ? a.unspentMicro + a.heldMicro : 0;
  }

  async storedBalance(accountId: string): Promise<number | undefined> {
    const buckets = this.#accounts.get(accountId)?.buckets;
    const available = await this.available(accountId);
    return buckets && available !== undefined ? buckets.micro + available : undefined;
  }

  holdRider(): undefined {
    return undefined;
  }

  paidMarkerRider(): undefined {
    return undefined;
  }

  holdReply(): HoldResult {
    return { ok: false, leased: false };
  }

  async hold(accountId: string, hold: HoldRequest): Promise<HoldResult> {
    const a = this.#account(accountId);
    if (!a.open || !a.leaseId || a.unspentMicro < hold.amountMicro) return { ok: false, leased: a.open && Boolean(a.leaseId) };
    a.unspentMicro -= hold.amountMicro;
    a.heldMicro += hold.amountMicro;
    this.#holds.set(hold.key, { accountId, leaseId: a.leaseId, amountMicro: hold.amountMicro, expiresAtMs: hold.expiresAtMs });
    return { ok: true, leaseId: a.leaseId, unspentMicro: a.unspentMicro, heldMicro: a.heldMicro, bucketsMicro: a.buckets?.micro, whole: !a.partial };
  }

  async release(releases: readonly Release[]): Promise<void> {
    for (const { record } of releases) this.#release(record);
  }

  /** The same steps as the Redis wallet's `release` (wallet-redis.ts). */
  #release(record: ChargeRecord): boolean {
    const hold = this.#holds.get(record.key);
    if (!hold) return false;
    this.#holds.delete(record.key);
    const a = this.#account(hold.accountId);
    if (a.leaseId !== hold.leaseId) return true;
    a.heldMicro -= hold.amountMicro;
    if (a.open) a.unspentMicro += hold.amountMicro - record.amountMicro;
    return true;
  }

  async reapHolds(nowMs: number): Promise<string[]> {
    const expired = [...this.#holds].filter(([, hold]) => hold.expiresAtMs <= nowMs).map(([key]) => key);
    return expired.filter((key) => this.#release({ key, amountMicro: 0 }));
  }

  async held(accountId: string, leaseId: string): Promise<number> {
    const a = this.#accounts.get(accountId);
    return a?.leaseId === leaseId ? a.heldMicro : 0;
  }

  async orphanHolds(accountId: string, leaseId: string): Promise<void> {
    for (const hold of this.#holds.values()) if (hold.accountId === accountId && hold.leaseId === leaseId) hold.leaseId = '';
    const a = this.#account(accountId);
    if (a.leaseId === leaseId) a.heldMicro = 0;
  }
}

/**
 * One schedule of the billing model (`api/src/billing/billing.model.test.ts`): runs its steps on two
 * pods and keeps what every response reported, for the test's checks (the expectations stay there).
 */
import type { TestContext } from '@uda/test-support/api-harness';
import type { TestBucket } from '@uda/test-support/s3';
import { AccountStore } from '../../../src/accounts/store.ts';
import { type Billing, type ByteSpan, type Delivery, LEASE_TTL_MS, type WindowSpec, exportWindow, sqlWindow } from '../../../src/billing/index.ts';
import { RedisLimiterBackend } from '../../../src/limiter/redis.ts';
import { type Pods, abandoned, refusedFor402, twoPods } from './pods.ts';
import { COST, FILE_BYTES, HELD_ROWS, LOOKUP_COST, ROW_COST, type Step, TOPUP, TTL_MS } from './steps.ts';

type Account = Awaited<ReturnType<AccountStore['create']>>;
/** An open response; `file`: a download of an export file that carries its bytes (a break says which it delivered). */
interface Open {
  readonly pod: number;
  readonly delivery: Delivery;
  readonly file: boolean;
}

export class ModelRun {
  readonly world: Pods;
  readonly accounts: AccountStore;
  readonly account: Account;
  deposited: number;
  /** What responses reported charged; what breaks gave back. */
  reported = 0;
  refundedToCaller = 0;
  /** Charged lookups whose response broke → what the break gave back (from the log, the queue or the ledger). */
  readonly brokenLookups = new Map<string, number>();
  /** Charge keys whose refund a broken response reported. */
  readonly reportedRefunds = new Set<string>();
  /** Every charge's key (a lookup's, a window's) → what its response reported. */
  readonly charges = new Map<string, number>();
  /** Lookups whose hold this schedule made: a dead pod's hold keeps its charge in the balance until reaped. */
  readonly heldKeys = new Set<string>();
  /** Charges a dead pod's journal lost (SIGKILL: forgiven), with the lease they were spent under. */
  readonly lost = new Map<string, { leaseId: string; amountMicro: number }>();
  /** Leases open when Redis lost its keys: until they settle, the balance reads low by the credit their wallet held. */
  readonly lostWallets = new Set<string>();
  /** Charges whose deliveries were in flight when Redis lost the tracker's state: rule 2 cannot hold for them. */
  readonly trackerLost = new Set<string>();
  /** Redis lost this schedule's keys: the delivered bytes and the day's partial refunds started over (deploy.md). */
  redisLost = false;
  /** Export charge key → the byte spans its broken downloads delivered. */
  readonly brokenSpans = new Map<string, ByteSpan[]>();
  readonly completedKeys = new Set<string>();
  /** Charges a delivery completed since Redis last lost its keys (a completion before a loss is forgotten: DECISIONS §3 "Refunds"). */
  completedSinceLoss = new Set<string>();
  /** A lookup whose pod died before its response: its charge stands (rule 2 in the billing door). */
  readonly diedWithPod = new Set<string>();
  /** Pods that serve nothing more: killed (SIGKILL) or stopped (SIGTERM, drained). */
  readonly crashed = new Set<number>();
  readonly killed = new Set<number>();
  readonly windows: WindowSpec[];
  readonly payer: { accountId: string; tier: Account['tier'] };
  readonly #ctx: TestContext;
  readonly #limiter: RedisLimiterBackend;
  readonly #open: Open[] = [];

  private constructor(ctx: TestContext, world: Pods, accounts: AccountStore, account: Account, startBalance: number) {
    this.#ctx = ctx;
    this.world = world;
    this.accounts = accounts;
    this.account = account;
    this.deposited = startBalance;
    this.payer = { accountId: account.id, tier: account.tier };
    this.#limiter = new RedisLimiterBackend({ client: ctx.redis, prefix: world.prefix });
    this.windows = [
      sqlWindow(account.id, 'q1', 't1'),
      sqlWindow(account.id, 'q2', 't1'),
      ...['service.db', 'tables/gutenberg.csv', 'tables/census_states.parquet'].map((file) => exportWindow(account.id, `exports/v1/${file}`, 86_400_000)),
    ];
  }

  static async start(ctx: TestContext, bucket: TestBucket, startBalance: number): Promise<ModelRun> {
    const accounts = new AccountStore(ctx.db);
    const account = await accounts.create({ email: 'model@example.com', tier: 'developer' });
    await accounts.setGrant(account.id, startBalance);
    return new ModelRun(ctx, twoPods(ctx, bucket), accounts, account, startBalance);
  }

  /** The pods still serving. */
  get live(): Billing[] {
    return this.world.pods.filter((_, i) => !this.crashed.has(i));
  }

  /** Charges forgiven: `forgiven` (the billing's word, and a dead pod's journal), less what a break gave back. */
  forgivenMicro(): number {
    return [...this.world.forgiven].reduce((total, key) => total + (this.charges.get(key) ?? 0) - (this.brokenLookups.get(key) ?? 0), 0);
  }

  /** A lost charge spent straight from the wallet stays spent in the balance until its lease settles. */
  async lostUnsettled(): Promise<number> {
    let total = 0;
    for (const [key, { leaseId, amountMicro }] of this.lost) {
      if (this.heldKeys.has(key) || this.brokenLookups.has(key)) continue;
      const lease = await this.#ctx.db('credit_leases').where({ id: leaseId }).first('settled_at');
      if (!lease?.settled_at) total += amountMicro;
    }
    return total;
  }

  /** Runs one batch: its steps concurrently, a SIGTERM after the others (it stops new requests and lets those in flight finish). */
  async batch(steps: readonly Step[]): Promise<void> {
    await Promise.all(steps.filter((x) => x.kind !== 'stop').map((s) => this.#step(s)));
    for (const stop of steps.filter((x) => x.kind === 'stop')) await this.#step(stop);
    // A request that was running on a pod when it died may have reported its charge after the crash step looked.
    for (const dead of this.killed) this.#bury(dead);
    // An early lease extension runs past its lookup's response: a readout in the middle of its
    // move of credit (buckets first, wallet next) would see it half made.
    await Promise.all(this.world.pods.map((pod) => pod.writesDone()));
    // A live pod's hold releases and journal leave within a flush interval; a readout counts a hold as
    // unspent until then, and a charge that arrives after its lease settled moves the buckets then.
    await Promise.all(this.live.map((pod) => pod.flush()));
  }

  /** The pod that reconciles at the end: a live one, or a new one when both died. */
  survivor(): number {
    const { pods, startPod } = this.world;
    return !this.crashed.has(0) ? 0 : !this.crashed.has(1) ? 1 : pods.push(startPod()) - 1;
  }

  /**
   * The end of the world: every surviving delivery breaks, dead pods' entries and every lease expire,
   * the survivor reconciles, live pods drain (a dead pod's journal died with it), the logs are stored.
   */
  async end(survivor: number): Promise<void> {
    const { pods, clocks, usage } = this.world;
    for (const item of this.#open.splice(0)) await this.#abandon(item.delivery);
    await Promise.all(this.live.map((pod) => pod.sendReleases()));
    clocks.deliveries += TTL_MS + 1;
    clocks.leases += LEASE_TTL_MS + 1;
    await pods[survivor]!.reconcile();
    for (const [i, pod] of pods.entries()) if (!this.crashed.has(i)) await pod.drain(0);
    for (const log of usage) await log.store();
  }

  async #step(s: Step): Promise<void> {
    switch (s.kind) {
      case 'window':
        return this.#window(s.pod, s.window, s.bytes, s.made);
      case 'range':
        return this.#range(s.pod, s.file, s.from, s.length);
      case 'lookup':
        return this.#lookup(s.pod);
      case 'held':
        return this.#held(s.pod, s.rows, s.fail);
      case 'complete':
        return this.#complete(s.pick);
      case 'break':
        return this.#break(s.pick, s.from, s.length);
      case 'flush':
        return void (this.crashed.has(s.pod) || (await this.world.pods[s.pod]!.flush()));
      case 'expire':
        this.world.clocks.leases += LEASE_TTL_MS + 1;
        return void (this.crashed.has(s.pod) || (await this.world.pods[s.pod]!.reconcile()));
      case 'topup':
        this.deposited += TOPUP;
        await this.accounts.addTopoff(this.account.id, TOPUP);
        return;
      case 'stop':
        return this.#stop(s.pod);
      case 'redisLoss':
        return this.#redisLoss();
      case 'crash':
        // The pod dies: its deliveries are never ended, its hold releases never sent, and it serves nothing more.
        this.crashed.add(s.pod);
        this.killed.add(s.pod);
        this.#bury(s.pod);
        return;
    }
  }

  async #window(pod: number, window: number, bytes: boolean, made: boolean): Promise<void> {
    if (this.crashed.has(pod)) return;
    const isFile = window >= 2;
    const options = { costMicro: COST, carriesBytes: bytes, madeResult: made, sizeBytes: isFile ? FILE_BYTES : undefined };
    const delivery = await this.world.pods[pod]!.deliverWindow(this.payer, this.windows[window]!, options).catch(refusedFor402);
    if (!delivery) return;
    this.#reported(delivery, true);
    this.#open.push({ pod, delivery, file: isFile && bytes && delivery.holdsCharge });
  }

  /** A range download of an export file that breaks having delivered `length` bytes from `from`. */
  async #range(pod: number, file: number, from: number, length: number): Promise<void> {
    if (this.crashed.has(pod)) return;
    const options = { costMicro: COST, carriesBytes: true, sizeBytes: FILE_BYTES };
    const delivery = await this.world.pods[pod]!.deliverWindow(this.payer, this.windows[2 + file]!, options).catch(refusedFor402);
    if (!delivery) return;
    this.#reported(delivery, true);
    const span = length > 0 ? { start: from, end: Math.min(FILE_BYTES, from + length) } : undefined;
    if (span) this.brokenSpans.set(delivery.chargeKey, [...(this.brokenSpans.get(delivery.chargeKey) ?? []), span]);
    await this.#abandon(delivery, span);
  }

  async #lookup(pod: number): Promise<void> {
    if (this.crashed.has(pod)) return;
    const delivery = await this.world.pods[pod]!.deliverOnce(this.payer, { costMicro: LOOKUP_COST }).catch(refusedFor402);
    if (!delivery) return;
    this.#reported(delivery, false);
    this.#open.push({ pod, delivery, file: false });
  }

  /** A lookup that holds HELD_ROWS rows' cost in its counter call, then charges `rows` of them or fails. */
  async #held(podIndex: number, rows: number, fail: boolean): Promise<void> {
    if (this.crashed.has(podIndex)) return;
    const pod = this.world.pods[podIndex]!;
    // The request's counter call: no counter here, only the rider (the hold and this pod's queued releases).
    const plan = pod.planHold(this.payer, HELD_ROWS * ROW_COST);
    const { reply } = plan.rider ? await this.#limiter.takeWith([], plan.rider) : { reply: undefined };
    const hold = await plan.made(reply);
    if (fail) {
      if (hold) await pod.releaseHold(hold);
      return;
    }
    // No hold (a short or closed wallet): the lookup charges the usual way, as the route does.
    const delivery = await pod.deliverOnce(this.payer, { costMicro: rows * ROW_COST }, hold).catch(refusedFor402);
    if (!delivery) return;
    if (hold) this.heldKeys.add(delivery.chargeKey);
    this.#reported(delivery, false);
    this.#open.push({ pod: podIndex, delivery, file: false });
  }

  async #complete(pick: number): Promise<void> {
    const item = this.#take(pick);
    if (!item) return;
    if (item.delivery.holdsCharge) {
      this.completedKeys.add(item.delivery.chargeKey);
      this.completedSinceLoss.add(item.delivery.chargeKey);
    }
    await item.delivery.complete();
  }

  /** A delivery breaks; an export download's having delivered `length` bytes from `from` (0: before its first byte). */
  async #break(pick: number, from: number, length: number): Promise<void> {
    const item = this.#take(pick);
    if (!item) return;
    const span = item.file && length > 0 ? { start: from, end: Math.min(FILE_BYTES, from + length) } : undefined;
    if (span) this.brokenSpans.set(item.delivery.chargeKey, [...(this.brokenSpans.get(item.delivery.chargeKey) ?? []), span]);
    await this.#abandon(item.delivery, span);
  }

  /** A SIGTERM: the server closed its connections, so each open response on the pod breaks; then the drain. */
  async #stop(pod: number): Promise<void> {
    if (this.crashed.has(pod)) return;
    this.crashed.add(pod);
    for (const cut of this.#closeAll(pod)) await this.#abandon(cut.delivery);
    await this.world.pods[pod]!.drain(0);
  }

  /** Redis loses every key of this schedule. */
  async #redisLoss(): Promise<void> {
    const leases = (await this.#ctx.db('credit_leases').where({ account_id: this.account.id }).whereNull('settled_at').select('id')) as { id: string }[];
    for (const lease of leases) this.lostWallets.add(lease.id);
    for (const item of this.#open) this.trackerLost.add(item.delivery.chargeKey);
    this.redisLost = true;
    this.completedSinceLoss = new Set();
    const keys = await this.#ctx.redis.keys(`${this.world.prefix}*`);
    if (keys.length) await this.#ctx.redis.del(...keys);
  }

  /** What a response reported; a window key reported twice (two pods spent it after Redis forgot it) adds up. */
  #reported(delivery: Delivery, window: boolean): void {
    const { chargeKey, settlement } = delivery;
    this.reported += settlement.chargedMicro;
    if (!window) this.charges.set(chargeKey, settlement.chargedMicro);
    else if (settlement.chargedMicro) this.charges.set(chargeKey, (this.charges.get(chargeKey) ?? 0) + settlement.chargedMicro);
  }

  #take = (pick: number): Open | undefined => (this.#open.length ? this.#open.splice(pick % this.#open.length, 1)[0] : undefined);

  /** A dead pod: its journal's charges are lost (forgiven) and its responses are never ended. */
  #bury(podIndex: number): void {
    const pod = this.world.pods[podIndex]!;
    const unsent = new Set(pod.unsentReleases());
    for (const entry of pod.unacked().filter((e) => e.accountId === this.account.id)) {
      // Its hold was never released: the hold, not a spend, is in the balance.
      if (unsent.has(entry.key)) this.heldKeys.add(entry.key);
      else this.heldKeys.delete(entry.key);
      this.lost.set(entry.key, { leaseId: entry.leaseId, amountMicro: entry.amountMicro });
      this.world.forgiven.add(entry.key);
    }
    for (const dead of this.#closeAll(podIndex)) if (dead.delivery.chargeKey.startsWith('lookup:')) this.diedWithPod.add(dead.delivery.chargeKey);
  }

  /** A response breaks, having sent `span`: what it gave back is added after the await (a batch's steps run concurrently). */
  async #abandon(delivery: Delivery, span?: ByteSpan): Promise<void> {
    const back = await abandoned(delivery, this.brokenLookups, span, this.reportedRefunds);
    this.refundedToCaller += back;
  }

  /** Takes every open response of the pod. */
  #closeAll(pod: number): Open[] {
    const taken = this.#open.filter((item) => item.pod === pod);
    this.#open.splice(0, this.#open.length, ...this.#open.filter((item) => item.pod !== pod));
    return taken;
  }
}

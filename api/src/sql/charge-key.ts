/**
 * Idempotency keys for charges that cover a window of requests (DECISIONS §3): a SQL result's
 * 5-minute window, an export file's 24 h window.
 *
 * The ledger treats a reused key as a duplicate even after its charge was refunded, so a fixed key
 * would turn every later download in the window free once one download broke part-way. The key
 * therefore carries a generation: the number of refunds already made under the window's base key.
 * Concurrent requests compute the same generation and so still charge once.
 */
import type { Db } from '../db/index.ts';

export interface WindowCharge {
  /** The key to charge under now. */
  readonly key: string;
  /** A charge under `key` is already in the ledger: this request is a free re-read. */
  readonly charged: boolean;
}

export async function windowCharge(db: Db, accountId: string, base: string): Promise<WindowCharge> {
  const refunds = await db('ledger')
    .where({ account_id: accountId, kind: 'refund' })
    .andWhere('idempotency_key', 'like', `refund:${escapeLike(base)}#%`)
    .count<{ count: string | number }[]>({ count: '*' });
  const key = `${base}#${Number(refunds[0]?.count ?? 0)}`;
  const existing = await db('ledger').where({ idempotency_key: key, kind: 'charge' }).first('id');
  return { key, charged: existing !== undefined };
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

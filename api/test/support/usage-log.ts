/**
 * Reads the usage log back from the bucket (`api/src/billing/usage-log.ts`) with hyparquet, a
 * Parquet reader independent of the DuckDB that wrote it: the records of the files whose name
 * contains `pod` (a test names its pods).
 */
import { parquetReadObjects } from 'hyparquet';
import type { ObjectStore } from '@uda/shared/object-store';
import type { UsageRecord } from '../../src/billing/index.ts';

/** A record as read back: the outbox's record, less its time (the tests compare the rest). */
export type UsageRecordRow = Omit<UsageRecord, 'at'>;

export async function readUsageLog(store: ObjectStore, pod: string): Promise<UsageRecordRow[]> {
  const records: UsageRecordRow[] = [];
  for (const object of await store.list('usage/')) {
    if (!object.key.includes(pod)) continue;
    const body = await store.get(object.key);
    if (!body) continue;
    const chunks: Buffer[] = [];
    for await (const chunk of body.body) chunks.push(chunk as Buffer);
    const bytes = Buffer.concat(chunks);
    const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    for (const row of await parquetReadObjects({ file })) {
      records.push({ ...(row as unknown as UsageRecordRow), rows: row.rows === null ? null : Number(row.rows), cost_micro: Number(row.cost_micro) });
    }
  }
  return records;
}

/**
 * A ranking thread of `rank-pool.ts`: ranks lookups over the shared arrays of the versions'
 * indexes, with scratch arrays of its own (`rank.ts` keeps them per index object, so per thread),
 * under the lookup's own deadline (`deadlineCheck`, on the time left when the lookup was handed over).
 */
import { parentPort } from 'node:worker_threads';
import { DeadlineExceeded } from '@uda/shared/duckdb';
import { deadlineCheck } from '../deadline.ts';
import { rankDocuments } from '@uda/search/rank';
import type { RankReply, ToRankThread } from './rank-pool.ts';
import type { SortedTexts, SourceIndex } from '@uda/search/index';

const indexes = new Map<number, SourceIndex>();

/** A cloned Buffer arrives as a plain Uint8Array over the same shared memory: the Buffer view `rank.ts` compares with. */
const asBuffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
const withBuffer = (texts: SortedTexts): SortedTexts => ({ bytes: asBuffer(texts.bytes), ends: texts.ends });

function received(index: SourceIndex): SourceIndex {
  return { ...index, terms: withBuffer(index.terms), stems: withBuffer(index.stems), titles: withBuffer(index.titles) };
}

function rank(message: Extract<ToRankThread, { kind: 'rank' }>): RankReply {
  const index = indexes.get(message.key);
  if (!index) return { task: message.task, failed: `index ${message.key} was not sent to this thread` };
  try {
    const checkDeadline = deadlineCheck(message.remainingMs);
    // Checked once before the work, so a lookup out of time never answers, however little its ranking reads.
    checkDeadline();
    const ranking = rankDocuments(index, message.query, message.limit, checkDeadline);
    return { task: message.task, total: ranking.total, docs: ranking.docs.map((ranked) => ranked.doc) };
  } catch (error) {
    if (error instanceof DeadlineExceeded) return { task: message.task, timedOut: true };
    return { task: message.task, failed: error instanceof Error ? error.message : String(error) };
  }
}

parentPort!.on('message', (message: ToRankThread) => {
  if (message.kind === 'drop') {
    indexes.delete(message.key);
    return;
  }
  if (message.index) indexes.set(message.key, received(message.index));
  parentPort!.postMessage(rank(message));
});

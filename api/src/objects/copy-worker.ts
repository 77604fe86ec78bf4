/**
 * The warm-up's worker thread (`object-copier.ts` starts it): copies objects from the store into
 * cache files with `copyObject`. Reading S3 allocates a new buffer per socket read, which sets off
 * garbage collections; in the API's main thread each marks the whole request-serving heap and pauses
 * every request, while here it marks this thread's small heap and pauses nothing else.
 * workerData: the object store settings (`createObjectStore`).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createObjectStore } from '@uda/shared/object-store';
import { copyObject } from './copy-object.ts';
import type { FromCopier, ToCopier } from './object-copier.ts';

const store = createObjectStore(workerData as Parameters<typeof createObjectStore>[0]);
const running = new Map<number, AbortController>();
const port = parentPort!;

port.on('message', (message: ToCopier) => {
  if (message.kind === 'cancel') return void running.get(message.id)?.abort();
  const abort = new AbortController();
  running.set(message.id, abort);
  copyObject(store, message, message.path, abort.signal).then(
    () => port.postMessage({ id: message.id } satisfies FromCopier),
    (error: unknown) => port.postMessage({ id: message.id, failed: error instanceof Error ? error.message : String(error) } satisfies FromCopier),
  ).finally(() => running.delete(message.id));
});

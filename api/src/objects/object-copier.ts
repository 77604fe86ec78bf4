/**
 * Runs the warm-up's copies in one worker thread (`copy-worker.ts`), started on the first copy and
 * ended by `close()`. `copy` has the shape of `CopyObject`, so the cache treats it like a copy in
 * this thread: it resolves when the file is written whole, rejects otherwise, and its signal
 * cancels it (the worker stops reading and closes the file; the cache removes it).
 */
import { Worker } from 'node:worker_threads';
import type { CopyObject } from './copy-object.ts';

export type ToCopier = { kind: 'copy'; id: number; key: string; etag: string; path: string } | { kind: 'cancel'; id: number };
export type FromCopier = { id: number; failed?: string };

export class ObjectCopier {
  readonly #storeSettings: Record<string, unknown>;
  #worker: Worker | undefined;
  readonly #jobs = new Map<number, { resolve(): void; reject(error: Error): void }>();
  #nextId = 1;

  /** `storeSettings`: what `createObjectStore` takes, handed to the worker. */
  constructor(storeSettings: Record<string, unknown>) {
    this.#storeSettings = storeSettings;
  }

  readonly copy: CopyObject = (info, path, signal) =>
    new Promise<void>((resolve, reject) => {
      const id = this.#nextId++;
      const worker = this.#started();
      this.#jobs.set(id, { resolve, reject });
      signal?.addEventListener('abort', () => worker.postMessage({ kind: 'cancel', id } satisfies ToCopier), { once: true });
      worker.postMessage({ kind: 'copy', id, key: info.key, etag: info.etag, path } satisfies ToCopier);
    });

  /** Ends the worker; copies still running fail. */
  async close(): Promise<void> {
    const worker = this.#worker;
    this.#worker = undefined;
    await worker?.terminate();
  }

  #started(): Worker {
    if (this.#worker) return this.#worker;
    const worker = new Worker(new URL('./copy-worker.ts', import.meta.url), { workerData: this.#storeSettings });
    // The warm-up never keeps the process alive; a copy cut by the exit leaves a temporary file
    // that the next start removes (`ObjectCache.open`).
    worker.unref();
    worker.on('message', (reply: FromCopier) => {
      const job = this.#jobs.get(reply.id);
      this.#jobs.delete(reply.id);
      if (reply.failed === undefined) job?.resolve();
      else job?.reject(new Error(reply.failed));
    });
    const failAll = (error: Error) => {
      if (this.#worker === worker) this.#worker = undefined;
      for (const job of this.#jobs.values()) job.reject(error);
      this.#jobs.clear();
    };
    worker.on('error', failAll);
    worker.on('exit', (code) => failAll(new Error(`copy worker exited (${code})`)));
    this.#worker = worker;
    return worker;
  }
}

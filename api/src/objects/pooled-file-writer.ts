/**
 * A file writer for the cache's fills that copies what arrives into two reused 1 MiB blocks and
 * writes a block to the file while the other fills. The S3 SDK hands over a new 64 KiB buffer per
 * socket read, and nothing the SDK allows avoids that; what can be avoided is keeping those buffers
 * alive. `fs.createWriteStream` holds each one until its (batched) disk write returns, long enough
 * for many to survive a young-generation collection, be promoted, and set off full collections;
 * here each is copied out as it arrives and dropped at once, so it dies young.
 *
 * Backpressure: a chunk is taken as soon as it is copied, unless both blocks are full, then only
 * when the older block's write returned. Memory is two blocks per fill, whatever the file size.
 */
import { type FileHandle, open } from 'node:fs/promises';
import { Writable } from 'node:stream';

/** Bytes per block, and so per disk write. */
export const BLOCK_BYTES = 1024 * 1024;

export class PooledFileWriter extends Writable {
  readonly path: string;
  /** Bytes the file holds: blocks whose write has returned. */
  bytesWritten = 0;
  #file: FileHandle | undefined;
  readonly #blocks = [Buffer.allocUnsafeSlow(BLOCK_BYTES), Buffer.allocUnsafeSlow(BLOCK_BYTES)] as const;
  /** Writes in flight, by block; a block is filled again only once its write returned. */
  readonly #writes: [Promise<void>, Promise<void>] = [Promise.resolve(), Promise.resolve()];
  #current: 0 | 1 = 0;
  /** Bytes of the current block filled so far. */
  #filled = 0;
  /** File offset of the current block. */
  #position = 0;

  /** Creates `path`, which must not exist yet (`wx`). */
  constructor(path: string) {
    super({ decodeStrings: true });
    this.path = path;
  }

  override _construct(callback: (error?: Error | null) => void): void {
    open(this.path, 'wx').then((file) => {
      this.#file = file;
      callback();
    }, callback);
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.#take(chunk).then(() => callback(), callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    const last = this.#filled > 0 ? this.#flush() : Promise.resolve();
    // Flushed to disk before the cache commits it: otherwise the kernel writes the file back while
    // its first downloads read it, and they compete for the disk and the CPU.
    last
      .then(() => Promise.all(this.#writes))
      .then(() => this.#file?.datasync())
      .then(() => callback(), callback);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    // Waits for the writes in flight, so the file is closed (and can be removed) when 'close' fires.
    const file = this.#file;
    this.#file = undefined;
    Promise.allSettled(this.#writes)
      .then(() => file?.close())
      .then(() => callback(error), (closeError: unknown) => callback(error ?? (closeError as Error)));
  }

  async #take(chunk: Buffer): Promise<void> {
    for (let offset = 0; offset < chunk.length; ) {
      const copied = chunk.copy(this.#blocks[this.#current], this.#filled, offset);
      offset += copied;
      this.#filled += copied;
      if (this.#filled === BLOCK_BYTES) await this.#flush();
    }
  }

  /** Starts the current block's write and moves to the other block once its own write returned. */
  async #flush(): Promise<void> {
    const i = this.#current;
    const written = this.#writeAll(this.#blocks[i].subarray(0, this.#filled), this.#position);
    // Handled here too, so that a failure noticed only at the next flush is no unhandled rejection.
    written.catch(() => undefined);
    this.#writes[i] = written;
    this.#position += this.#filled;
    this.#current = i === 0 ? 1 : 0;
    this.#filled = 0;
    await this.#writes[this.#current];
  }

  async #writeAll(bytes: Buffer, position: number): Promise<void> {
    const file = this.#file;
    if (!file) throw new Error(`${this.path} is closed`);
    for (let done = 0; done < bytes.length; ) {
      const { bytesWritten } = await file.write(bytes, done, bytes.length - done, position + done);
      done += bytesWritten;
    }
    this.bytesWritten += bytes.length;
  }
}

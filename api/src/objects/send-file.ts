/**
 * Writes a byte range of an open file to an HTTP response through two reused buffers.
 * `fs.createReadStream` allocates a fresh buffer for every chunk; at hundreds of MB/s that is
 * enough external memory to set off a full garbage collection every few dozen MB, which was the
 * largest share of the API's CPU in the export profile. Here one buffer is read from the disk
 * while the other is written to the socket, and a buffer is read into again only after the
 * socket has taken its bytes: backpressure and memory are bounded by two chunks per download.
 */
import type { ServerResponse } from 'node:http';
import type { FileHandle } from 'node:fs/promises';
import { finished } from 'node:stream/promises';

/** Bytes per read and per socket write. */
export const FILE_CHUNK_BYTES = 1024 * 1024;

/**
 * Sends `length` bytes from `start` and ends the response; resolves with the bytes the socket
 * took, rejects when the client goes away or the file ends early. Closes the file either way.
 * `onSent` hears the bytes the socket has taken so far, as they are taken.
 */
export async function sendFileRange(res: ServerResponse, file: FileHandle, start: number, length: number, onSent?: (sent: number) => void): Promise<number> {
  // Settles when the response finishes or closes early; every wait below races it, because a
  // write to a socket that is already gone never calls back.
  const done = finished(res);
  done.catch(() => undefined);
  const buffers = [Buffer.allocUnsafeSlow(Math.min(FILE_CHUNK_BYTES, length)), Buffer.allocUnsafeSlow(Math.min(FILE_CHUNK_BYTES, length))];
  const writes: Promise<void>[] = [Promise.resolve(), Promise.resolve()];
  let sent = 0;
  try {
    for (let offset = 0, i = 0; offset < length; i ^= 1) {
      await Promise.race([writes[i], done]);
      const buffer = buffers[i]!;
      const { bytesRead } = await file.read(buffer, 0, Math.min(buffer.length, length - offset), start + offset);
      if (bytesRead === 0) throw new Error(`file ended ${length - offset} bytes early`);
      offset += bytesRead;
      const written = write(res, buffer.subarray(0, bytesRead)).then(() => {
        sent += bytesRead;
        onSent?.(sent);
      });
      // Handled here so that a failed write the loop has not reached yet is no unhandled rejection.
      written.catch(() => undefined);
      writes[i] = written;
    }
    await Promise.race([Promise.all(writes), done]);
    res.end();
    await done;
    return sent;
  } finally {
    await file.close();
  }
}

function write(res: ServerResponse, chunk: Buffer): Promise<void> {
  return new Promise((resolve, reject) => void res.write(chunk, (error) => (error ? reject(error) : resolve())));
}

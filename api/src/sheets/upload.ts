/**
 * Reads a multipart upload (one `file` part, optional `name` and `slug` fields) by streaming the
 * file to a temporary path with a byte cap (STYLE §9): over the cap is 413 and nothing is kept.
 */
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import busboy from 'busboy';
import type { Request } from 'express';
import { ApiError } from '../errors/api-error.ts';
import { ErrorCode } from '../errors/codes.ts';

export interface ReceivedFile {
  readonly path: string;
  readonly fileName: string;
  readonly contentType: string;
  readonly bytes: number;
}

export interface ReceivedUpload {
  readonly fields: Readonly<Record<string, string>>;
  readonly file: ReceivedFile | undefined;
  /** Removes the temporary file; call in `finally`. */
  discard(): Promise<void>;
}

const invalid = (message: string) => new ApiError(ErrorCode.INVALID_INPUT, { message });

export async function receiveUpload(req: Request, maxBytes: number): Promise<ReceivedUpload> {
  if (!/^multipart\/form-data/i.test(req.headers['content-type'] ?? '')) {
    throw invalid('Send the file as multipart/form-data with a "file" part.');
  }
  const dir = await mkdtemp(join(tmpdir(), 'uda-upload-'));
  const discard = () => rm(dir, { recursive: true, force: true });
  try {
    const received = await parse(req, dir, maxBytes);
    return { ...received, discard };
  } catch (error) {
    await discard();
    throw error;
  }
}

function parse(req: Request, dir: string, maxBytes: number): Promise<Omit<ReceivedUpload, 'discard'>> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, limits: { files: 1, fields: 10, fieldSize: 1024, fileSize: maxBytes } });
    } catch {
      reject(invalid('The multipart body could not be read.'));
      return;
    }
    const fields: Record<string, string> = {};
    let saving: Promise<ReceivedFile> | undefined;
    parser.on('field', (name, value) => (fields[name] = value));
    parser.on('file', (name, stream, info) => {
      if (name !== 'file' || saving) {
        stream.resume();
        return;
      }
      saving = saveFile(stream, join(dir, 'upload'), info, maxBytes);
      saving.catch(() => undefined);
    });
    parser.on('error', () => reject(invalid('The multipart body could not be read.')));
    parser.on('close', () => {
      if (!saving) return resolve({ fields, file: undefined });
      saving.then((file) => resolve({ fields, file }), reject);
    });
    req.pipe(parser);
  });
}

async function saveFile(
  stream: NodeJS.ReadableStream & { truncated?: boolean },
  path: string,
  info: busboy.FileInfo,
  maxBytes: number,
): Promise<ReceivedFile> {
  let bytes = 0;
  stream.on('data', (chunk: Buffer) => (bytes += chunk.length));
  await pipeline(stream, createWriteStream(path));
  // busboy stops at `fileSize` and flags the stream: the file was larger than the limit.
  if (stream.truncated) throw tooLarge(maxBytes);
  return { path, fileName: info.filename ?? '', contentType: info.mimeType ?? '', bytes };
}

export function tooLarge(maxBytes: number): ApiError {
  const mb = Math.round(maxBytes / (1024 * 1024));
  return new ApiError(ErrorCode.UPLOAD_TOO_LARGE, { message: `The file is larger than the ${mb} MB upload limit. Nothing was stored.` });
}

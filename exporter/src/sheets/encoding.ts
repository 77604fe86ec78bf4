/**
 * DuckDB reads text as UTF-8 and, given other bytes, fails with engine text or silently keeps
 * replacement characters. Checking in Node first gives the user one clear reason. Streaming, so a
 * 50 MB upload never sits in memory.
 */
import { createReadStream } from 'node:fs';
import { SheetIngestError } from './errors.ts';

export const NOT_UTF8_MESSAGE = 'The file is not UTF-8 encoded. Save it as UTF-8 (for example "CSV UTF-8") and upload it again.';

export async function assertUtf8File(path: string): Promise<void> {
  // `fatal` makes invalid sequences throw; a UTF-8 BOM is valid and skipped.
  const decoder = new TextDecoder('utf-8', { fatal: true });
  try {
    for await (const chunk of createReadStream(path)) decoder.decode(chunk as Buffer, { stream: true });
    decoder.decode();
  } catch (error) {
    // Matched by code: under jest the decoder's TypeError comes from another realm.
    if ((error as { code?: unknown }).code === 'ERR_ENCODING_INVALID_ENCODED_DATA') throw new SheetIngestError(NOT_UTF8_MESSAGE);
    throw error;
  }
}

/**
 * DuckDB's `read_json` accepts a JSON array cut off after a complete element (`[{"a":1},`), so a
 * truncated upload would load as fewer rows. Checking the final character catches that case
 * without parsing 50 MB in Node; syntax errors inside the array are DuckDB's to report.
 */
import { open } from 'node:fs/promises';
import { SheetIngestError } from './errors.ts';

const TAIL_BYTES = 4096;

export async function checkJsonArrayEnd(path: string, size: number): Promise<void> {
  const file = await open(path, 'r');
  try {
    const length = Math.min(TAIL_BYTES, size);
    const buffer = Buffer.alloc(length);
    await file.read(buffer, 0, length, size - length);
    if (!buffer.toString('latin1').trimEnd().endsWith(']')) throw new SheetIngestError('The file is not valid JSON: it ends before the array is closed.');
  } finally {
    await file.close();
  }
}

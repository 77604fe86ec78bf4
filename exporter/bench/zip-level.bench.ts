/**
 * `npm run bench:zip-level -- <file.csv>`: CPU seconds and size of deflating a CSV export file at
 * several zlib levels, the measurement behind the level `writeZip` uses for CSV entries. Reads at
 * most the first 256 MB of the file. CPU time, not wall time, so a loaded machine barely moves it.
 */
import { open } from 'node:fs/promises';
import { deflateRawSync } from 'node:zlib';

const LEVELS = [1, 3, 6, 9];
const MAX_BYTES = 256 * 1024 * 1024;

async function head(path: string): Promise<Buffer> {
  const handle = await open(path);
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(MAX_BYTES), 0, MAX_BYTES, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

const path = process.argv[2];
if (!path) {
  console.error('usage: npm run bench:zip-level -- <file.csv>');
  process.exit(2);
}
const input = await head(path);
const rows = LEVELS.map((level) => {
  const before = process.cpuUsage();
  const output = deflateRawSync(input, { level });
  const cpu = process.cpuUsage(before);
  const seconds = (cpu.user + cpu.system) / 1e6;
  return { level, 'input (MB)': Number((input.length / 1e6).toFixed(1)), 'output (MB)': Number((output.length / 1e6).toFixed(1)), ratio: Number((output.length / input.length).toFixed(3)), 'CPU s': Number(seconds.toFixed(2)), 'MB/s per core': Math.round(input.length / 1e6 / seconds) };
});
console.table(rows);
console.log(`node ${process.version}; reproduce with: npm run bench:zip-level -- ${path}`);

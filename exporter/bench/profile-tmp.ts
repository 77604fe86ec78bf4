import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@uda/shared/logger';
import { LocalFolderStore } from '@uda/shared/object-store';
import { runExport } from '../src/job.ts';
const scratch = await mkdtemp(join(tmpdir(), 'uda-ingest-prof-'));
const t = performance.now();
const r = await runExport({ inputDir: process.argv[2]!, workDir: join(scratch, 'work'), store: new LocalFolderStore(join(scratch, 'objects')), keepVersions: 3,
  duckdb: { memoryLimit: process.env.MEM ?? '1GB', threads: 2 }, logger: createLogger({ name: 'prof', level: 'info' }) });
console.log(JSON.stringify({ rows: r.rows, s: (performance.now() - t) / 1000, rss: process.resourceUsage().maxRSS / 1024 }));
await rm(scratch, { recursive: true, force: true });

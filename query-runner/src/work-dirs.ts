/**
 * Each runner process works in its own `DATA_DIR/runner-*` folder (a copy of `service.db`, spill
 * files, scratch results). A SIGKILLed runner cannot delete its folder, so every runner, at start,
 * deletes the folders of runners that are gone: each folder names its owner in an
 * `owner` file (host and pid); a folder whose owner process no longer exists on this host is
 * stale, and so is a folder without an owner file once it is older than a start can take.
 */
import { hostname } from 'node:os';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const OWNER_FILE = 'owner';
const PREFIX = 'runner-';
/** A folder without an owner file younger than this may belong to a runner that is starting. */
const UNOWNED_GRACE_MS = 5 * 60_000;

export async function createWorkDir(dataDir: string): Promise<string> {
  const dir = await mkdtemp(join(dataDir, PREFIX));
  await writeFile(join(dir, OWNER_FILE), `${hostname()} ${process.pid}\n`);
  return dir;
}

/** Deletes stale working folders; returns their names. */
export async function removeStaleWorkDirs(dataDir: string): Promise<string[]> {
  const entries = await readdir(dataDir, { withFileTypes: true }).catch(() => []);
  const removed: string[] = [];
  for (const entry of entries) {
    if (!entry.isDirectory() || !entry.name.startsWith(PREFIX)) continue;
    const dir = join(dataDir, entry.name);
    if (await isStale(dir)) {
      await rm(dir, { recursive: true, force: true });
      removed.push(entry.name);
    }
  }
  return removed;
}

async function isStale(dir: string): Promise<boolean> {
  const owner = await readFile(join(dir, OWNER_FILE), 'utf8').catch(() => undefined);
  if (owner === undefined) {
    const info = await stat(dir).catch(() => undefined);
    return info !== undefined && Date.now() - info.mtimeMs > UNOWNED_GRACE_MS;
  }
  const [host, pid] = owner.trim().split(' ');
  // A folder of another host (a shared volume) is that host's to clean.
  return host === hostname() && !isRunning(Number(pid));
}

function isRunning(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

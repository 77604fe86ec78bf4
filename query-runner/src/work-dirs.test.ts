import { describe, it, expect } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createWorkDir, removeStaleWorkDirs } from './work-dirs.ts';

/** The pid of a process that has already exited. */
function deadPid(): number {
  const child = spawnSync('true');
  return child.pid!;
}

describe('working folders', () => {
  it('removes the folders of runners that are gone, keeps live ones, other hosts\' and fresh unowned ones', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'uda-workdirs-'));
    try {
      const mine = await createWorkDir(dataDir);
      const dead = join(dataDir, 'runner-dead');
      await mkdir(join(dead, 'db'), { recursive: true });
      await writeFile(join(dead, 'db', 'service.db'), 'a copy of the database');
      await writeFile(join(dead, 'owner'), `${hostname()} ${deadPid()}\n`);
      const otherHost = join(dataDir, 'runner-elsewhere');
      await mkdir(otherHost);
      await writeFile(join(otherHost, 'owner'), `another-host ${deadPid()}\n`);
      const oldUnowned = join(dataDir, 'runner-old');
      await mkdir(oldUnowned);
      const hourAgo = new Date(Date.now() - 3_600_000);
      await utimes(oldUnowned, hourAgo, hourAgo);
      const freshUnowned = join(dataDir, 'runner-starting');
      await mkdir(freshUnowned);
      await mkdir(join(dataDir, 'objects'));

      expect((await removeStaleWorkDirs(dataDir)).sort()).toEqual(['runner-dead', 'runner-old']);
      expect((await readdir(dataDir)).sort()).toEqual(['objects', mine.split('/').pop(), 'runner-elsewhere', 'runner-starting'].sort());
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

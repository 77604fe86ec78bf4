/**
 * Comments and docs give their reasons, not a tracker's numbers: the issue tracker is not in the
 * repository, so "see issue 22" tells a newcomer nothing. A rule cites its DECISIONS section, a
 * behaviour states its reason.
 */
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from '@jest/globals';

const repo = resolve(import.meta.dirname, '..');

function trackerReferences(): string[] {
  try {
    const found = execFileSync('git', ['grep', '-n', '-I', '-i', '-E', '\\bissues? #?[0-9]+', '--', '.', ':!scripts/tracker-references.test.ts', ':!package-lock.json'], { cwd: repo, encoding: 'utf8' });
    return found.split('\n').filter(Boolean);
  } catch (error) {
    // git grep exits 1 when nothing matches.
    if ((error as { status?: number }).status === 1) return [];
    throw error;
  }
}

describe('tracker references', () => {
  it('no tracked file points at "issue N" of a tracker outside the repository', () => {
    expect(trackerReferences()).toEqual([]);
  });
});

import { randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { rankRunners } from './rendezvous.ts';

const runners = ['http://10.0.0.1:8090', 'http://10.0.0.2:8090', 'http://10.0.0.3:8090', 'http://10.0.0.4:8090'];

describe('rankRunners', () => {
  it('ranks the same way whatever the order the runners are listed in', () => {
    const id = randomUUID();
    expect(rankRunners(id, runners)).toEqual(rankRunners(id, [...runners].reverse()));
  });

  it('spreads queries over all runners', () => {
    const owners = new Map<string, number>();
    for (let i = 0; i < 2000; i++) {
      const owner = rankRunners(randomUUID(), runners)[0]!;
      owners.set(owner, (owners.get(owner) ?? 0) + 1);
    }
    expect(owners.size).toBe(4);
    for (const count of owners.values()) expect(count).toBeGreaterThan(350);
  });

  it('moves only the queries of a runner that leaves', () => {
    const ids = Array.from({ length: 500 }, () => randomUUID());
    const before = new Map(ids.map((id) => [id, rankRunners(id, runners)[0]]));
    const fewer = runners.filter((r) => r !== runners[1]);
    for (const id of ids) {
      const owner = rankRunners(id, fewer)[0];
      if (before.get(id) !== runners[1]) expect(owner).toBe(before.get(id));
    }
  });

  it('returns an empty ranking when no runner is ready', () => {
    expect(rankRunners(randomUUID(), [])).toEqual([]);
  });
});

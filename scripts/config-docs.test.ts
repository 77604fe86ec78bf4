import { readFile } from 'node:fs/promises';
import { describe, expect, it } from '@jest/globals';
import { README, configSections, renderReadme } from './config-docs.ts';

describe('README configuration tables', () => {
  it('list every setting of every workspace with its default (run `npm run docs:config` to update)', async () => {
    const readme = await readFile(README, 'utf8');
    expect(readme).toBe(renderReadme(readme, await configSections()));
  });
});

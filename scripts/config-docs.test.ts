import { readFile } from 'node:fs/promises';
import { describe, expect, it } from '@jest/globals';
import { CONFIG_DOC, configSections, renderConfigDoc } from './config-docs.ts';

describe('docs/configuration.md tables', () => {
  it('list every setting of every workspace with its default (run `npm run docs:config` to update)', async () => {
    const doc = await readFile(CONFIG_DOC, 'utf8');
    expect(doc).toBe(renderConfigDoc(doc, await configSections()));
  });
});

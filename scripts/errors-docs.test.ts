import { readFile } from 'node:fs/promises';
import { describe, expect, it } from '@jest/globals';
import { ErrorCode } from '../api/src/errors/codes.ts';
import { ERRORS_FILE, renderErrorCatalog } from './errors-docs.ts';

describe('docs/errors.md', () => {
  it('lists every error code with its status, when, billing and what to do (run `npm run docs:errors` to update)', async () => {
    const file = await readFile(ERRORS_FILE, 'utf8');
    expect(file).toBe(renderErrorCatalog());
    for (const code of Object.values(ErrorCode)) expect(file).toContain(`| \`${code}\` |`);
  });
});

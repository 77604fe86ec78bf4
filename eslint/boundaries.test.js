/**
 * The boundaries rules fail what they are for and pass what is allowed, on probe files placed in the
 * repository's folders (the rules read a file's place from its path; nothing is written to disk).
 */
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { Linter } from 'eslint';
import tseslint from 'typescript-eslint';
import { boundaries } from './boundaries.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const linter = new Linter({ configType: 'flat' });
const config = [
  {
    files: ['**/*.ts'],
    languageOptions: { parser: tseslint.parser },
    plugins: { boundaries },
    rules: { 'boundaries/workspace-imports': 'error', 'boundaries/test-helpers': 'error' },
  },
];

/** The rules' messages for `code` as the file `file` (relative to the repository). */
const problems = (file, code) => linter.verify(code, config, { filename: path.join(ROOT, file) }).map((m) => `${m.ruleId}: ${m.message}`);

describe('workspace imports', () => {
  it('refuses a workspace importing another workspace that is not shared or a declared interface', () => {
    expect(problems('api/src/sheets/probe.ts', "import { startSheetsWorker } from '@uda/exporter/sheets/worker';")).toEqual([
      expect.stringContaining('api/ may not import @uda/exporter/sheets/worker'),
    ]);
    expect(problems('query-runner/src/probe.ts', "import type { Services } from '@uda/api/services';")).toHaveLength(1);
  });

  it('allows @uda/shared, the declared interfaces, and the folders that put workspaces together', () => {
    expect(problems('api/src/probe.ts', "import type { Logger } from '@uda/shared/logger';")).toEqual([]);
    expect(problems('query-runner/src/probe.ts', "import { rankDocuments } from '@uda/search/rank';")).toEqual([]);
    expect(problems('dashboard/src/probe.ts', "import type { KeysAnswer } from '@uda/api/session/schemas';")).toEqual([]);
    expect(problems('scripts/probe.ts', "import { startEmbeddedSheetsWorker } from '@uda/exporter/sheets/embedded';")).toEqual([]);
  });

  it('allows the dashboard only types from the API', () => {
    expect(problems('dashboard/src/probe.ts', "import { keysAnswer } from '@uda/api/session/schemas';")).toEqual([
      expect.stringContaining('dashboard/ may not import @uda/api/session/schemas'),
    ]);
  });
});

describe('test helpers', () => {
  it('refuses a test/ folder under src/', () => {
    expect(problems('api/src/sheets/test/client.ts', 'export const x = 1;')).toEqual([expect.stringContaining('never in a test/ folder under src/')]);
  });

  it('refuses production code importing a test helper, and lets tests import them', () => {
    const imports = "import { form } from '../../test/support/sheets-client.ts';\nimport { startTestApi } from '@uda/test-support/api-harness';";
    expect(problems('api/src/sheets/probe.ts', imports)).toEqual([
      expect.stringContaining('Only tests import test helpers (../../test/support/sheets-client.ts)'),
      expect.stringContaining('Only tests import test helpers (@uda/test-support/api-harness)'),
    ]);
    expect(problems('api/src/sheets/probe.test.ts', imports)).toEqual([]);
  });
});

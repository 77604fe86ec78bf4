/**
 * The boundaries lint keeps the composition root a root: only main.ts, the app factories, tests and
 * benchmarks import `api/src/services.ts` (eslint/boundaries.js `composition-root`).
 */
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';

const repo = resolve(import.meta.dirname, '..');
// A runtime path: the rules are plain JavaScript without type declarations.
const { boundaries } = (await import(pathToFileURL(join(repo, 'eslint/boundaries.js')).href)) as { boundaries: ESLint.Plugin };

const eslint = new ESLint({
  cwd: repo,
  overrideConfigFile: true,
  overrideConfig: { files: ['**/*.ts'], languageOptions: { parser: tseslint.parser }, plugins: { boundaries }, rules: { 'boundaries/composition-root': 'error' } },
});

/** The rule's findings for `text` as if it were the file at `file`. */
async function refusals(file: string, text: string): Promise<string[]> {
  const [result] = await eslint.lintText(text, { filePath: join(repo, file) });
  return result!.messages.map((m) => m.ruleId ?? m.message);
}

describe('composition-root lint', () => {
  it('refuses a feature module importing services.ts, even for its type alone', async () => {
    expect(await refusals('api/src/sql/handlers.ts', "import type { Services } from '../services.ts';\n")).toEqual(['boundaries/composition-root']);
    expect(await refusals('api/src/routes/table.ts', "import { buildServices } from '../services.ts';\n")).toEqual(['boundaries/composition-root']);
  });

  it('refuses it through the package export too, outside tests', async () => {
    expect(await refusals('dashboard/src/main.ts', "import type { Services } from '@uda/api/services';\n")).toEqual(['boundaries/composition-root']);
  });

  it('lets main.ts, the app factories, tests and benchmarks import it', async () => {
    for (const file of ['api/src/main.ts', 'api/src/app.ts', 'api/src/admin/app.ts', 'api/src/sql/query.200.test.ts', 'api/bench/sql-server.ts']) {
      const from = file.startsWith('api/src/admin/') || file.startsWith('api/src/sql/') ? '../services.ts' : file.startsWith('api/bench/') ? '../src/services.ts' : './services.ts';
      expect(await refusals(file, `import type { Services } from '${from}';\n`)).toEqual([]);
    }
    expect(await refusals('test-support/src/api-harness.ts', "import type { Services } from '@uda/api/services';\n")).toEqual([]);
  });

  it('leaves other imports alone', async () => {
    expect(await refusals('api/src/sql/handlers.ts', "import type { Db } from '../db/index.ts';\n")).toEqual([]);
  });
});

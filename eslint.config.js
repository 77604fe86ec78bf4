import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import { CODE_FOLDERS, boundaries } from './eslint/boundaries.js';

/**
 * STYLE: every code folder (the workspaces, and `scripts`, `load-tests`, `test`) reaches another
 * only through a declared package export (`@uda/shared/catalog` listed in shared/package.json
 * `exports`), never by a relative path out of its own folder; no module graph has a cycle,
 * type-only imports included; and only main.ts, the app factories, tests and benchmarks import
 * the api's composition root (`api/src/services.ts`). The rules are local (eslint/boundaries.js):
 * import-x's no-cycle ignores `import type` edges. Test helpers live in @uda/test-support or a
 * `test/` folder beside `src/`, and only tests (and benchmarks) import them.
 */
const packageBoundaries = {
  files: CODE_FOLDERS.map((folder) => `${folder}/**/*.{ts,js,mjs}`),
  plugins: { boundaries },
  rules: {
    'boundaries/workspace-imports': 'error',
    'boundaries/no-cycle': 'error',
    'boundaries/folder-doors': 'error',
    'boundaries/test-helpers': 'error',
    'boundaries/composition-root': 'error',
  },
};

/** STYLE: short functions (the anchors' median is 9–20 lines): one over 60 lines is split into named steps. Tests are exempt. */
const shortFunctions = {
  files: CODE_FOLDERS.map((folder) => `${folder}/**/*.{ts,js,mjs}`),
  ignores: ['**/*.test.ts', '**/test/**'],
  rules: { 'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true }] },
};

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/.data/**', 'coverage/**', 'k8s/**', 'charts/**', 'api/test/generated/**', 'dashboard/dist/**', 'test-output/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node }, parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // Type-aware: a promise is awaited, returned or explicitly `void`ed, and never passed where a callback's result is ignored.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      // STYLE §8: explicit named exports, no barrels that re-export everything.
      'no-restricted-syntax': [
        'error',
        { selector: 'ExportAllDeclaration', message: 'Use explicit named exports, not export *.' },
        { selector: 'ExportDefaultDeclaration', message: 'Use named exports.' },
      ],
      // STYLE §4: the environment is read in one config module per workspace.
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'Read process.env only in a config module.' },
      ],
    },
  },
  packageBoundaries,
  shortFunctions,
  {
    // One route never imports another's module: what two routes share lives outside routes/ (api/src/sql/settle.ts).
    files: ['api/src/routes/*/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '^\\.\\./[^./][^/]*/', message: 'Move what two routes share into a module outside routes/ (e.g. api/src/sql/).' }] },
      ],
    },
  },
  {
    // The dashboard runs in the browser (DECISIONS §10).
    files: ['dashboard/src/**'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    files: ['**/config.ts', '**/main.ts', 'scripts/**', '**/*.test.ts', '**/test/**', 'test-support/**', '**/bench/**'],
    rules: { 'no-restricted-properties': 'off' },
  },
  {
    // Tool entry points that jest loads by default export.
    files: ['*.config.js', 'test-support/src/global-*.ts'],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    // Plain JavaScript config files are outside the TypeScript project.
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
  },
);

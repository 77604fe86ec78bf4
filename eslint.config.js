import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

const WORKSPACES = ['shared', 'exporter', 'query-runner', 'api'];

/**
 * STYLE: workspaces depend on `shared/`, never on each other's internals. A file in one workspace
 * reaches another only through its package name and `exports` (`@uda/shared/catalog`), never by a
 * relative path into it.
 */
const workspaceBoundaries = WORKSPACES.map((workspace) => ({
  files: [`${workspace}/**/*.ts`],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          {
            regex: `^(\\.\\./)+(${WORKSPACES.filter((w) => w !== workspace).join('|')})/`,
            message: 'Import another workspace through its package name and `exports` (e.g. @uda/shared/catalog), not by a relative path.',
          },
        ],
      },
    ],
  },
}));

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
  ...workspaceBoundaries,
  {
    // The dashboard runs in the browser (DECISIONS §10).
    files: ['dashboard/src/**'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    files: ['**/config.ts', '**/main.ts', 'scripts/**', '**/*.test.ts', '**/test/**', '**/bench/**'],
    rules: { 'no-restricted-properties': 'off' },
  },
  {
    // Tool entry points that jest loads by default export.
    files: ['*.config.js', 'test/support/global-*.ts'],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    // Plain JavaScript config files are outside the TypeScript project.
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
  },
);

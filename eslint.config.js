import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/.data/**', 'coverage/**', 'k8s/**', 'charts/**', 'dashboard/dist/**', 'test-output/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
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
);

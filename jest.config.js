// One jest run for every workspace. TypeScript is compiled by swc into native ES modules, so the
// tests run the same module graph that Node 24 runs with type stripping.
/** @type {import('jest').Config} */
export default {
  testEnvironment: 'node',
  testMatch: ['<rootDir>/{shared,search,exporter,query-runner,api,scripts,load-tests,test-support}/**/*.test.ts', '<rootDir>/test/**/*.test.ts', '<rootDir>/eslint/*.test.js'],
  testPathIgnorePatterns: ['/node_modules/', '/.data/'],
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      {
        jsc: { parser: { syntax: 'typescript' }, target: 'es2023' },
        module: { type: 'es6' },
      },
    ],
  },
  globalSetup: '<rootDir>/test-support/src/global-setup.ts',
  globalTeardown: '<rootDir>/test-support/src/global-teardown.ts',
  testTimeout: 60_000,
  // Tests that start servers must close them; this makes a leak visible instead of hanging CI.
  forceExit: false,
};

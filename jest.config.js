/**
 * Two projects: `unit` (pure code, no services) and `integration` (real PostgreSQL and
 * a real Temporal dev server, started once per run by the global setup).
 * @type {import('jest').Config}
 */
const transform = { '^.+\\.(t|j)sx?$': ['@swc/jest'] };
module.exports = {
  // Global option (not per project): hooks that start real services need time on a loaded 2-core machine.
  testTimeout: 90_000,
  // Each test file leaves native (Temporal core) and module-registry memory behind in its worker: recycle a worker
  // once it holds this much, or a long run ends in a heap-limit crash (seen at ~4 GB after 100+ files).
  workerIdleMemoryLimit: '1200MB',
  reporters: ['default', '<rootDir>/test/helpers/summary-reporter.js'],
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      transform,
      testMatch: ['<rootDir>/test/reasoning/**/*.test.ts', '<rootDir>/test/unit/**/*.test.ts'],
    },
    {
      displayName: 'integration',
      testEnvironment: 'node',
      transform,
      testMatch: ['<rootDir>/test/**/*.test.ts'],
      testPathIgnorePatterns: [
        '<rootDir>/test/reasoning/',
        '<rootDir>/test/unit/',
        // `npm test` runs the fault file on its own after the rest (test/run-all.js): it restarts PostgreSQL.
        ...(process.env.SVC_TEST_PHASE === 'main' ? ['<rootDir>/test/faults/'] : []),
      ],
      globalSetup: '<rootDir>/test/helpers/global-setup.ts',
      globalTeardown: '<rootDir>/test/helpers/global-teardown.ts',
    },
  ],
};

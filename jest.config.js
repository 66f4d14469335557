/**
 * Two projects (README "Test it"):
 * - unit: tests/unit, pure logic. No Postgres, Temporal, Chromium or external tools, no dist/ build:
 *   `npm run test:unit` runs in seconds on a machine with none of them.
 * - integration: tests/integration, the real service with its backing services. Its globalSetup starts
 *   one Temporal dev server and bundles the workflows; Jest runs it only when an integration test is selected.
 * `npm test` runs both projects (then the hostile pass, jest.hostile.config.js).
 */
const shared = {
  rootDir: __dirname,
  testEnvironment: 'node',
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
  // The workspace packages from their sources, as tsconfig.json's `paths` (no build needed for unit tests).
  moduleNameMapper: { '^@formwork/(wire|query-runners)$': '<rootDir>/packages/$1/src/index.ts' },
};

/** @type {import('jest').Config} */
const integration = {
  ...shared,
  displayName: 'integration',
  roots: ['<rootDir>/tests/integration'],
  globalSetup: '<rootDir>/tests/support/global-setup.ts',
  globalTeardown: '<rootDir>/tests/support/global-teardown.ts',
};

/** @type {import('jest').Config} */
const unit = { ...shared, displayName: 'unit', roots: ['<rootDir>/tests/unit'] };

/** @type {import('jest').Config} */
module.exports = {
  projects: [unit, integration],
  // Jest reads these from the top level only (not per project); they apply to both projects.
  // Three times what the slowest test needs alone: a machine shared with another test run is that much slower (tests/support/wait.ts).
  testTimeout: 180000,
  // Each file's time goes to the run's table of the slowest files (scripts/test-report.mjs).
  reporters: ['default', '<rootDir>/tests/support/file-times-reporter.js'],
  // Longest file first, from the committed durations when Jest's cache has none (a fresh clone).
  testSequencer: '<rootDir>/tests/support/sequencer.js',
  maxWorkers: 4,
  // Temporal workers and browsers are closed in afterAll; this catches anything left behind.
  forceExit: false,
};

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/tests'],
  // tests/hostile runs in a pass of its own (jest.hostile.config.js).
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/tests/hostile/'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
  globalSetup: '<rootDir>/tests/support/global-setup.ts',
  globalTeardown: '<rootDir>/tests/support/global-teardown.ts',
  testTimeout: 60000,
  maxWorkers: 2,
  // Temporal workers and browsers are closed in afterAll; this catches anything left behind.
  forceExit: false,
};

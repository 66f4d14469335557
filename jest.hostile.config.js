/**
 * The hostile-input suite (tests/hostile): run alone, after the other tests, so that its health
 * probe measures the service rather than whatever else the test run is doing on this machine.
 * It uses the integration project's setup (Temporal dev server, workflow bundle).
 */
const { projects, ...base } = require('./jest.config');
const { displayName: _name, ...integration } = projects.find((p) => p.displayName === 'integration');

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  ...integration,
  roots: ['<rootDir>/tests/hostile'],
  maxWorkers: 1,
  reporters: ['default', ['<rootDir>/tests/support/file-times-reporter.js', { name: 'hostile' }]],
};

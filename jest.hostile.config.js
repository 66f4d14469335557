/**
 * The hostile-input suite (tests/hostile): run alone, after the other tests, so that its health
 * probe measures the service rather than whatever else the test run is doing on this machine.
 */
const base = require('./jest.config');

/** @type {import('jest').Config} */
module.exports = { ...base, roots: ['<rootDir>/tests/hostile'], testPathIgnorePatterns: ['/node_modules/'], maxWorkers: 1 };

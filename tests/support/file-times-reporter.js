// Jest reporter: records each test file's wall time (start to end, as Jest's own per-file timing) in
// $FORMWORK_TEST_OUTPUT/file-times-<name>.tsv, for the run's table of the slowest files
// (scripts/test-report.mjs, docs/testing.md). Plain JavaScript: Jest loads reporters untransformed.
const { appendFileSync, mkdirSync } = require('node:fs');
const { join, relative } = require('node:path');

class FileTimesReporter {
  constructor(globalConfig, options = {}) {
    this.rootDir = globalConfig.rootDir;
    this.name = options.name;
  }

  onTestResult(test, result) {
    const dir = process.env.FORMWORK_TEST_OUTPUT;
    if (!dir) return;
    const seconds = (result.perfStats.end - result.perfStats.start) / 1000;
    const tests = result.numPassingTests + result.numFailingTests;
    mkdirSync(dir, { recursive: true });
    const name = this.name ?? test.context.config.displayName?.name ?? 'jest';
    appendFileSync(join(dir, `file-times-${name}.tsv`), `${relative(this.rootDir, test.path)}\t${seconds.toFixed(1)}\t${tests}\n`);
  }
}

module.exports = FileTimesReporter;

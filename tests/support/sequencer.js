// Jest test order: longest file first, so that no long file starts last and leaves a worker idle at the
// end of the run. Jest's own order knows durations only from its cache of earlier runs in the same
// folder; a fresh clone (CI) has none and falls back to file size, which started the 2-minute kill
// test near the end. The durations of a measured run are committed in tests/support/file-durations.json
// (`node scripts/test-report.mjs test-output --write-durations` refreshes it); Jest's cache, where it
// has one, still wins. Plain JavaScript: Jest loads sequencers untransformed.
const { relative } = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;
const committed = require('./file-durations.json');

class LongestFirst extends Sequencer {
  sort(tests) {
    const known = (test) => this.time(test) ?? (committed[relative(test.context.config.rootDir, test.path)] ?? 0) * 1000;
    return [...tests].sort((a, b) => known(b) - known(a) || (a.path < b.path ? -1 : 1));
  }
}

module.exports = LongestFirst;

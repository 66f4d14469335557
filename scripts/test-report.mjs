// Prints and writes the run's report (scripts/phases.sh `phase_report`): the wall time of every phase of
// `.ci/run` / `npm test`, then the 20 slowest test files with their times (tests/support/file-times-reporter.js).
// Usage: node scripts/test-report.mjs <output folder> [--write-durations]; writes <output folder>/report.md,
// and with --write-durations each file's time into tests/support/file-durations.json (the order in which
// tests/support/sequencer.js starts the files in a clone that has no Jest cache).
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = process.argv[2] ?? 'test-output';
const rows = (file) =>
  existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => line.split('\t'))
    : [];

const phases = rows(join(dir, 'phases.tsv'));
// A phase run in the background beside others (its name says "beside") overlaps them: not added to the total.
const total = phases.filter(([name]) => !name.includes('beside')).reduce((sum, [, s]) => sum + Number(s), 0);
const lines = ['## Phases', '', '| phase | seconds | exit |', '| --- | ---: | ---: |'];
for (const [name, seconds, exit] of phases) lines.push(`| ${name} | ${seconds} | ${exit} |`);
lines.push(`| **total** (background phases not added) | **${total.toFixed(1)}** | |`, '');

const files = readdirSync(dir)
  .filter((f) => f.startsWith('file-times-') && f.endsWith('.tsv'))
  .flatMap((f) => rows(join(dir, f)).map(([path, seconds, tests]) => ({ run: f.slice(11, -4), path, seconds: Number(seconds), tests })));
if (files.length) {
  const sum = files.reduce((s, f) => s + f.seconds, 0);
  lines.push(`## Slowest test files (20 of ${files.length}; ${sum.toFixed(0)} s of file time in all)`, '', '| file | run | tests | seconds |', '| --- | --- | ---: | ---: |');
  for (const f of files.sort((a, b) => b.seconds - a.seconds).slice(0, 20)) lines.push(`| ${f.path} | ${f.run} | ${f.tests} | ${f.seconds.toFixed(1)} |`);
  lines.push('');
}

if (process.argv.includes('--write-durations')) {
  const durations = Object.fromEntries(files.map((f) => [f.path, Math.round(f.seconds)]).sort(([a], [b]) => (a < b ? -1 : 1)));
  writeFileSync(join(dirname(fileURLToPath(import.meta.url)), '..', 'tests', 'support', 'file-durations.json'), JSON.stringify(durations, null, 2) + '\n');
}

const report = lines.join('\n');
writeFileSync(join(dir, 'report.md'), report + '\n');
console.log(`\n${report}\n(written to ${join(dir, 'report.md')})`);

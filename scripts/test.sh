#!/usr/bin/env bash
# `npm test`: the whole suite, phase by phase, each timed (scripts/phases.sh), then the phase table and the
# slowest test files, printed and written to test-output/report.md (docs/testing.md).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/phases.sh

# The type check (which also compiles into dist/, what the evaluation workers and role processes run)
# and the type-aware ESLint each build a program of their own and each use one core: side by side.
typecheck_and_eslint() {
  local tsc_status=0 eslint_status=0
  npx tsc -p tsconfig.json &
  local tsc_pid=$!
  npx eslint . || eslint_status=$?
  wait "$tsc_pid" || tsc_status=$?
  ((tsc_status == 0 && eslint_status == 0))
}

phase "tsc (type check and build) beside eslint" typecheck_and_eslint
phase "knip (unused files and exports)" npx knip
phase "jest unit" env FORMWORK_TEST_FULL=1 npx jest --selectProjects unit
phase "jest integration" npx jest --selectProjects integration
phase "jest hostile (alone)" npx jest -c jest.hostile.config.js
phase_report

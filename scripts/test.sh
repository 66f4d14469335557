#!/usr/bin/env bash
# `npm test`: the whole suite, phase by phase, each timed (scripts/phases.sh), then the phase table and the
# slowest test files, printed and written to test-output/report.md (docs/testing.md).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/phases.sh
trap 'kill $(jobs -p) 2>/dev/null || true' EXIT

# The type-aware ESLint builds a TypeScript program of its own and uses one core for about a minute:
# it runs beside the type check (which also compiles into dist/, what the evaluation workers and role
# processes run), knip and the unit tests, which need neither it nor each other's results.
phase "eslint (type-aware; beside the next three)" npx eslint . &
eslint=$!
phase "packages (their own builds into packages/*/dist, which dist/ loads)" npm run build:packages --silent
phase "tsc (type check and build into dist/)" npx tsc -p tsconfig.json
phase "web (type check and Vite build into web/dist/)" npm run build --workspace web --silent
phase "knip (unused files and exports)" npx knip
phase "jest unit" env FORMWORK_TEST_FULL=1 npx jest --selectProjects unit
phase "eslint, the rest of its time" wait "$eslint"
phase "jest integration" npx jest --selectProjects integration
phase "jest hostile (alone)" npx jest -c jest.hostile.config.js
phase_report

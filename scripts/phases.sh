# Phase timing for `.ci/run` and `npm test` (docs/testing.md "Where the time goes"). Source it, then:
#   phase "name" command args...   runs the command, appends "name<TAB>seconds<TAB>exit" to the phase file
#   phase_report                   prints the phase table and the slowest test files (scripts/test-report.mjs)
# Everything lands in the run's output folder, $FORMWORK_TEST_OUTPUT (default test-output/): phases.tsv,
# file-times-*.tsv (one per Jest run, tests/support/file-times-reporter.js), report.md, screenshots.
# A caller that already started the table (.ci/run) exports FORMWORK_PHASES_STARTED=1 so npm test appends to it.

FORMWORK_TEST_OUTPUT="${FORMWORK_TEST_OUTPUT:-$PWD/test-output}"
export FORMWORK_TEST_OUTPUT
mkdir -p "$FORMWORK_TEST_OUTPUT"
if [[ -z "${FORMWORK_PHASES_STARTED:-}" ]]; then
  rm -f "$FORMWORK_TEST_OUTPUT"/phases.tsv "$FORMWORK_TEST_OUTPUT"/file-times-*.tsv "$FORMWORK_TEST_OUTPUT"/report.md
  export FORMWORK_PHASES_STARTED=1
fi

phase() {
  local name="$1"; shift
  local began status=0
  began=$(date +%s%N)
  echo "== $name"
  "$@" || status=$?
  local ms=$((($(date +%s%N) - began) / 1000000))
  printf '%s\t%d.%d\t%s\n' "$name" $((ms / 1000)) $((ms % 1000 / 100)) "$status" >>"$FORMWORK_TEST_OUTPUT/phases.tsv"
  if ((status != 0)); then
    phase_report
    echo "== $name failed (exit $status)" >&2
    exit "$status"
  fi
}

phase_report() {
  node "$(dirname "${BASH_SOURCE[0]}")/test-report.mjs" "$FORMWORK_TEST_OUTPUT"
}

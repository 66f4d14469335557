#!/usr/bin/env bash
# Builds the command-line tools the service and its tests run as child processes:
#   bash scripts/install-tools.sh [temporal|versitygw ...]   (no argument: all of them)
#   temporal   - Temporal CLI, whose dev server `npm start` and the tests use when TEMPORAL_ADDRESS is unset
#   versitygw  - Versity S3 gateway, the S3-compatible server of the storage tests
# They are built from source with `go install` because the SDK's own download of the Temporal CLI
# needs internet access at test time, and pinned versions keep every machine on the same server.
# Idempotent: a tool already present is left alone (delete it to rebuild).
# Used by .ci/run (all tools) and by the first `npm start` (`temporal` only: the service needs no S3
# server, and building versitygw costs a newcomer another minute). Binaries never go into the repository.
set -euo pipefail

TOOLS_DIR="${FORMWORK_TOOLS_DIR:-$HOME/.cache/formwork/bin}"

TOOLS=(
  "temporal github.com/temporalio/cli/cmd/temporal@v1.5.1"
  "versitygw github.com/versity/versitygw/cmd/versitygw@v1.2.0"
)

# Keep only the tools named on the command line; none named means all.
if (($#)); then
  selected=()
  for want in "$@"; do
    found=""
    for entry in "${TOOLS[@]}"; do
      read -r name _ <<<"$entry"
      if [[ "$name" == "$want" ]]; then found="$entry"; break; fi
    done
    if [[ -z "$found" ]]; then
      echo "install-tools: unknown tool '$want' (known: temporal, versitygw)" >&2
      exit 2
    fi
    selected+=("$found")
  done
  TOOLS=("${selected[@]}")
fi

mkdir -p "$TOOLS_DIR"

missing=0
for entry in "${TOOLS[@]}"; do
  read -r name _ <<<"$entry"
  [[ -x "$TOOLS_DIR/$name" ]] || missing=1
done
if [[ $missing -eq 1 ]] && ! command -v go >/dev/null 2>&1; then
  echo "install-tools: Go is required to build the missing tools (https://go.dev/dl/)" >&2
  exit 1
fi

for entry in "${TOOLS[@]}"; do
  read -r name module <<<"$entry"
  target="$TOOLS_DIR/$name"
  if [[ -x "$target" ]]; then
    echo "install-tools: $name present at $target"
    continue
  fi
  echo "install-tools: building $name from $module into $TOOLS_DIR (first run takes a few minutes)"
  if ! GOBIN="$TOOLS_DIR" go install "$module"; then
    echo "install-tools: building $name failed" >&2
    exit 1
  fi
  if [[ ! -x "$target" ]]; then
    echo "install-tools: go install succeeded but $target is missing" >&2
    exit 1
  fi
  echo "install-tools: $name installed at $target"
done

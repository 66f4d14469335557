#!/usr/bin/env bash
# Builds the agent's SQLite driver (better-sqlite3's native addon), which `npm ci` leaves unbuilt:
#   bash scripts/sqlite-driver.sh
# `npm ci` compiles nothing (package.json `allowScripts` refuses better-sqlite3's install script, and the
# service never loads it); only the agent (agent/, docs/agent.md) reads SQLite files, and it runs its
# PostgreSQL and MySQL queries without the driver. Compiling takes a C++ compiler, make and Python, and
# one to two minutes, so the built addon is kept in $FORMWORK_TOOLS_CACHE (default ~/.cache/formwork),
# keyed by the driver's version and Node's ABI, and copied from there on the next install. Used by .ci/run;
# an agent host runs it once after `npm ci`. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

pkg=node_modules/better-sqlite3
if [[ ! -f "$pkg/package.json" ]]; then
  echo "sqlite-driver: $pkg is not installed: run npm ci first" >&2
  exit 1
fi
addon="$pkg/build/Release/better_sqlite3.node"
version=$(node -p "require('./$pkg/package.json').version")
key="better-sqlite3-$version-node$(node -p 'process.versions.modules')-$(node -p 'process.platform + "-" + process.arch')"
cache="${FORMWORK_TOOLS_CACHE:-$HOME/.cache/formwork}/$key/better_sqlite3.node"

if [[ -f "$addon" ]] && node -e "require('./$pkg')" 2>/dev/null; then
  echo "sqlite-driver: present at $addon"
  exit 0
fi
if [[ -f "$cache" ]]; then
  mkdir -p "$(dirname "$addon")"
  cp "$cache" "$addon"
  echo "sqlite-driver: copied from $cache"
else
  echo "sqlite-driver: compiling better-sqlite3 $version (one to two minutes; kept in $(dirname "$cache"))"
  # The package's own build script, run by npm so that node-gyp finds Node's headers as npm configures them.
  log=$(mktemp)
  if ! npm run build-release --prefix "$pkg" >"$log" 2>&1; then
    cat "$log" >&2
    echo "sqlite-driver: compiling failed (it needs a C++ compiler, make and Python: apt-get install g++ make python3)" >&2
    exit 1
  fi
  rm -f "$log"
  mkdir -p "$(dirname "$cache")"
  cp "$addon" "$cache.tmp" && mv "$cache.tmp" "$cache"
fi
node -e "new (require('./$pkg'))(':memory:').prepare('SELECT 1').get()"
echo "sqlite-driver: better-sqlite3 $version works"

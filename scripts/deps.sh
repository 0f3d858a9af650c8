#!/usr/bin/env bash
# Installs the Debian packages the build and tests need, only those that are missing.
set -euo pipefail
need=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for p in build-essential cmake ninja-build pkg-config libcjson-dev libpcre2-dev libutf8proc-dev nodejs npm; do
  have_pkg "$p" || need+=("$p")
done
# Node and npm may come from outside Debian's packages (a preinstalled toolchain): accept them.
if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
  tmp=(); for p in "${need[@]}"; do [[ "$p" == nodejs || "$p" == npm ]] || tmp+=("$p"); done; need=("${tmp[@]+"${tmp[@]}"}")
fi
if [ ${#need[@]} -gt 0 ]; then
  echo "deps: installing ${need[*]}" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
# Test references from npm (pinned), installed once into tests/npm/node_modules.
if [ -f tests/npm/package.json ] && [ ! -d tests/npm/node_modules ]; then
  echo "deps: npm install (tests/npm)" >&2
  (cd tests/npm && npm install --no-audit --no-fund --silent >/dev/null) || {
    echo "deps: npm install failed; tests that need the npm reference will fail" >&2; }
fi

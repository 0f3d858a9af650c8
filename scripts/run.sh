#!/usr/bin/env bash
# make run: the serving benchmark on the built-in synthetic Qwen3-shaped model.
set -euo pipefail
build=${1:-build}; shift || true
mkdir -p out
exec "$build/pagellm" bench-serving --json-output out/bench-serving.json --plot out/bench-serving.svg "$@"

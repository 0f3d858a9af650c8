#!/bin/sh
# Fuzzes the checkpoint parsers (safetensors header, config.json, generation_config.json)
# with libFuzzer: builds tests/fuzz/fuzz_safetensors.c with clang, then runs it for
# SECONDS (default 60) on a scratch copy of the seed corpus. New crashes land in OUT.
# usage: scripts/fuzz.sh [SECONDS] [OUT_DIR]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-60}
out=${2:-$root/build-fuzz}
mkdir -p "$out/corpus"
cp "$root"/tests/fuzz/corpus/* "$out/corpus/"
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -I"$root/include" -I"$root/src" -I/usr/include/cjson \
    "$root/tests/fuzz/fuzz_safetensors.c" "$root/src/model/safetensors.c" "$root/src/model/config.c" \
    "$root/src/base/status.c" -lcjson -o "$out/fuzz_safetensors"
cd "$out"
./fuzz_safetensors -max_total_time="$secs" -max_len=4096 -print_final_stats=1 corpus

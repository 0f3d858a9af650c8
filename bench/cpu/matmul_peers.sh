#!/usr/bin/env bash
# Builds and runs bench/cpu/matmul_peers.c against an existing pagellm build.
# usage: bench/cpu/matmul_peers.sh [BUILD_DIR (default build)] [THREADS (default 1)] [ITERS (default 7)]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}; threads=${2:-1}; iters=${3:-7}
for p in libopenblas-dev libdnnl-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || {
    echo "matmul_peers: installing $p" >&2; apt-get install -y -qq "$p" >/dev/null; }
done
[ -f "$build/libpagellm.a" ] || { echo "matmul_peers: build pagellm first (make build)" >&2; exit 1; }
gcc -O2 -std=c11 -fopenmp -Iinclude -Isrc bench/cpu/matmul_peers.c "$build/libpagellm.a" \
    $(pkg-config --libs libcjson libpcre2-8 libutf8proc) -lopenblas -ldnnl -lm -o "$build/matmul_peers"
OMP_NUM_THREADS=$threads OMP_WAIT_POLICY=passive "$build/matmul_peers" "$threads" "$iters"

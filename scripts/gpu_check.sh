#!/usr/bin/env bash
# All GPU checks and benchmarks of the CUDA attention in one go, on a machine with an NVIDIA
# GPU (H200): the GPU test program, compute-sanitizer memcheck and racecheck on the fixture
# suite, `bench-attention --device cuda`, the torch SDPA anchors, and a short table last.
#
# usage: scripts/gpu_check.sh [--bin DIR] [--quick] [--skip-tests] [--skip-sanitizer]
#                             [--skip-bench] [--skip-anchors] [--bench-args "ARGS"]
#   --bin DIR   use prebuilt binaries from DIR (test_cuda_attention, and pagellm or
#               bench_attention_cuda; DIR/../lib joins LD_LIBRARY_PATH); default: build
#               with CMake into build-gpu (needs nvcc, cmake, and the Debian deps).
# Logs and JSON go to $OUT when set, else out/gpu_check. Exit status: nonzero if a step failed.
set -u
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
LOG="${OUT:-$ROOT/out/gpu_check}"
mkdir -p "$LOG"
BIN="" QUICK=0 TESTS=1 SAN=1 BENCH=1 ANCH=1 BENCH_ARGS=""
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) BIN="$2"; shift ;;
    --quick) QUICK=1 ;;
    --skip-tests) TESTS=0 ;;
    --skip-sanitizer) SAN=0 ;;
    --skip-bench) BENCH=0 ;;
    --skip-anchors) ANCH=0 ;;
    --bench-args) BENCH_ARGS="$2"; shift ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "gpu_check.sh: unknown flag '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

declare -a SUMMARY
RUNENV=(env)
status=0
step() { # name rc
  SUMMARY+=("$(printf '%-28s %s' "$1" "$([ "$2" -eq 0 ] && echo ok || echo "FAILED (rc $2)")")")
  [ "$2" -eq 0 ] || status=1
}

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv 2>&1 | tee "$LOG/gpu.txt"

if [ -z "$BIN" ]; then
  cmake -S "$ROOT" -B "$ROOT/build-gpu" -G Ninja -DCMAKE_BUILD_TYPE=Release > "$LOG/build.log" 2>&1 &&
    cmake --build "$ROOT/build-gpu" -j "$(nproc)" >> "$LOG/build.log" 2>&1
  rc=$?; step build $rc
  [ $rc -eq 0 ] || { tail -30 "$LOG/build.log"; exit 1; }
  TEST="$ROOT/build-gpu/tests/test_cuda_attention"
  BENCH_CMD=("$ROOT/build-gpu/pagellm" bench-attention --device cuda)
else
  BIN="$(cd "$BIN" && pwd)"
  # carried shared libraries for our binaries only (python keeps its own)
  [ -d "$BIN/../lib" ] && RUNENV=(env "LD_LIBRARY_PATH=$BIN/../lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
  TEST="$BIN/test_cuda_attention"
  if [ -x "$BIN/bench_attention_cuda" ]; then BENCH_CMD=("$BIN/bench_attention_cuda" --device cuda)
  else BENCH_CMD=("$BIN/pagellm" bench-attention --device cuda); fi
fi

if [ $TESTS -eq 1 ]; then
  iters=60; [ $QUICK -eq 1 ] && iters=20
  "${RUNENV[@]}" PL_CUDA_TEST_ITERS=$iters OMP_NUM_THREADS="$(nproc)" "$TEST" > "$LOG/test.log" 2>&1
  rc=$?; step "test_cuda_attention" $rc; tail -5 "$LOG/test.log"
fi

if [ $SAN -eq 1 ]; then
  if command -v compute-sanitizer > /dev/null; then
    for tool in memcheck racecheck; do
      "${RUNENV[@]}" PL_CUDA_TEST_QUICK=1 OMP_NUM_THREADS="$(nproc)" compute-sanitizer --tool $tool --error-exitcode 9 "$TEST" > "$LOG/sanitizer_$tool.log" 2>&1
      rc=$?; step "compute-sanitizer $tool" $rc; tail -3 "$LOG/sanitizer_$tool.log"
    done
  else
    SUMMARY+=("compute-sanitizer            not found (skipped)")
  fi
fi

if [ $BENCH -eq 1 ]; then
  qa=""; [ $QUICK -eq 1 ] && qa="--quick"
  # shellcheck disable=SC2086
  "${RUNENV[@]}" "${BENCH_CMD[@]}" $qa $BENCH_ARGS --json-output "$LOG/bench_cuda.json" > "$LOG/bench.txt" 2> "$LOG/bench.err"
  rc=$?; step "bench-attention cuda" $rc; cat "$LOG/bench.txt"; tail -3 "$LOG/bench.err"
fi

if [ $ANCH -eq 1 ]; then
  qa=""; [ $QUICK -eq 1 ] && qa="--quick"
  PYTHONUNBUFFERED=1 python3 "$ROOT/bench/anchors_torch.py" attention $qa --json-output "$LOG/anchors_torch.json" > "$LOG/anchors.log" 2>&1
  rc=$?; step "torch anchors" $rc; tail -3 "$LOG/anchors.log"
fi

if [ -f "$LOG/bench_cuda.json" ] && [ -f "$LOG/anchors_torch.json" ]; then
  python3 "$ROOT/bench/anchors_torch.py" compare "$LOG/bench_cuda.json" "$LOG/anchors_torch.json" | tee "$LOG/compare.txt"
fi
echo "== gpu_check summary (logs in $LOG) =="
printf '%s\n' "${SUMMARY[@]}"
exit $status

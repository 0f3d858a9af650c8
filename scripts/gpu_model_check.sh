#!/usr/bin/env bash
# GPU checks and benchmarks of the Qwen3 model on the CUDA backend, in one go, on a machine
# with an NVIDIA GPU (H200): the backend op tests (test_cuda_backend), the model tests
# (test_cuda_model: golden checkpoints, CPU vs CUDA synthetic models incl. qwen3-0.6b, the
# `pagellm logits --device cuda` CLI), the model benchmark (bench_model_cuda), and
# compute-sanitizer memcheck on the op tests (time-limited) last.
#
# usage: scripts/gpu_model_check.sh [--bin DIR] [--shape NAME] [--bench-args "ARGS"] [--skip-sanitizer]
#                                   [--serving]
#   --bin DIR   prebuilt binaries (pagellm, test_cuda_backend, test_cuda_model,
#               bench_model_cuda); DIR/../lib joins LD_LIBRARY_PATH. Default: build with CMake
#               into build-gpu and compile bench/cuda/bench_model_cuda.c (needs nvcc, cmake).
#   --shape     synthetic shape of the benchmark (default qwen3-4b)
#   --serving   also `pagellm bench-serving --device cuda --kv-mode paged` on the seed trace
# cuBLAS is taken from the machine (CUDA toolkit or the nvidia-cublas Python wheel).
# Logs and JSON go to $OUT when set, else out/gpu_model_check. Nonzero exit if a step failed.
set -u
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
LOG="${OUT:-$ROOT/out/gpu_model_check}"
mkdir -p "$LOG"
BIN="" SHAPE=qwen3-4b BENCH_ARGS="" SAN=1 SERVING=0
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) BIN="$2"; shift ;;
    --shape) SHAPE="$2"; shift ;;
    --bench-args) BENCH_ARGS="$2"; shift ;;
    --skip-sanitizer) SAN=0 ;;
    --serving) SERVING=1 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "gpu_model_check.sh: unknown flag '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
declare -a SUMMARY
status=0
step() { SUMMARY+=("$(printf '%-28s %s' "$1" "$([ "$2" -eq 0 ] && echo ok || echo "FAILED (rc $2)")")"); [ "$2" -eq 0 ] || status=1; }

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv 2>&1 | tee "$LOG/gpu.txt"
LIBS=""
for d in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib \
         "$(python3 -c 'import nvidia.cublas as m; print(list(m.__path__)[0] + "/lib")' 2>/dev/null)"; do
  if [ -n "$d" ] && [ -e "$d/libcublas.so.13" ]; then LIBS="$d"; break; fi
done
[ -n "$LIBS" ] || LIBS="$(dirname "$(find / -name libcublas.so.13 -not -path '/proc/*' 2>/dev/null | head -1)")"
echo "cuBLAS from: $LIBS"
if [ -z "$BIN" ]; then
  cmake -S "$ROOT" -B "$ROOT/build-gpu" -G Ninja -DCMAKE_BUILD_TYPE=Release > "$LOG/build.log" 2>&1 &&
    cmake --build "$ROOT/build-gpu" -j "$(nproc)" >> "$LOG/build.log" 2>&1 &&
    gcc -O2 -std=c11 -fopenmp -Iinclude -Isrc -I/usr/local/cuda/include bench/cuda/bench_model_cuda.c \
        build-gpu/libpagellm.a -L/usr/local/cuda/lib64 -lcudart_static -lcublas -lcublasLt -lculibos \
        -lcjson -lpcre2-8 -lutf8proc -lstdc++ -lm -ldl -lpthread -lrt -o build-gpu/bench_model_cuda >> "$LOG/build.log" 2>&1
  rc=$?; step build $rc
  [ $rc -eq 0 ] || { tail -30 "$LOG/build.log"; exit 1; }
  BIN="$ROOT/build-gpu"
  T="$BIN/tests"
else
  BIN="$(cd "$BIN" && pwd)"
  T="$BIN"
fi
LD="$LIBS"
[ -d "$BIN/../lib" ] && LD="$LD:$BIN/../lib"
export LD_LIBRARY_PATH="$LD${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PAGELLM_ROOT="$ROOT" PAGELLM_BIN="$BIN/pagellm" OMP_WAIT_POLICY=passive

timeout 60 env OMP_NUM_THREADS="$(nproc)" "$T/test_cuda_backend" > "$LOG/test_cuda_backend.log" 2>&1
rc=$?; step test_cuda_backend $rc; tail -4 "$LOG/test_cuda_backend.log"
timeout 90 env PL_CUDA_TEST_BIG=1 OMP_NUM_THREADS="$(nproc)" "$T/test_cuda_model" > "$LOG/test_cuda_model.log" 2>&1
rc=$?; step test_cuda_model $rc; grep -E "argmax agrees|FAILED|failed" "$LOG/test_cuda_model.log" | tail -12
# shellcheck disable=SC2086
timeout 90 env OMP_NUM_THREADS="$(nproc)" "$BIN/bench_model_cuda" --shape "$SHAPE" --json "$LOG/bench_model_cuda.json" $BENCH_ARGS \
  > "$LOG/bench_model_cuda.txt" 2>&1
rc=$?; step "bench_model_cuda $SHAPE" $rc; cat "$LOG/bench_model_cuda.txt"
if [ $SERVING -eq 1 ]; then
  timeout 240 "$BIN/pagellm" bench-serving --device cuda --kv-mode paged --shape "$SHAPE" --repeats 1 \
    --json-output "$LOG/bench_serving_cuda.json" > "$LOG/bench_serving_cuda.txt" 2>&1
  rc=$?; step "bench-serving cuda $SHAPE" $rc; tail -15 "$LOG/bench_serving_cuda.txt"
fi
if [ $SAN -eq 1 ] && command -v compute-sanitizer > /dev/null; then
  timeout 40 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 "$T/test_cuda_backend" > "$LOG/sanitizer_memcheck.log" 2>&1
  rc=$?; [ $rc -eq 124 ] && SUMMARY+=("compute-sanitizer memcheck  timed out (40 s; see log)") || step "compute-sanitizer memcheck" $rc
  tail -3 "$LOG/sanitizer_memcheck.log"
fi
echo "== gpu_model_check summary (logs in $LOG) =="
printf '%s\n' "${SUMMARY[@]}"
exit $status

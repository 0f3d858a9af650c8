#!/usr/bin/env bash
# GPU checks and benchmarks of the Qwen3 model on the CUDA backend, in one go, on a machine
# with an NVIDIA GPU (H200): the backend op tests (test_cuda_backend), the model tests
# (test_cuda_model: golden checkpoints, CPU vs CUDA synthetic models incl. qwen3-0.6b, graphed vs
# eager decode, the
# `pagellm logits --device cuda` CLI), the model benchmark (bench_model_cuda), and
# compute-sanitizer memcheck on the op tests (time-limited) last.
#
# usage: scripts/gpu_model_check.sh [--bin DIR] [--shape NAME] [--bench-args "ARGS"] [--skip-sanitizer]
#                                   [--serving] [--serving-only] [--no-heavy]
#   --bin DIR   prebuilt binaries (pagellm, test_cuda_backend, test_cuda_model,
#               bench_model_cuda); DIR/../lib joins LD_LIBRARY_PATH. Default: build with CMake
#               into build-gpu and compile bench/cuda/bench_model_cuda.c (needs nvcc, cmake).
#   --shape     synthetic shape of the benchmark (default qwen3-4b)
#   --serving   also, after the benchmark: (a) `pagellm bench-serving --device cuda` on the seed trace,
#               one run per KV mode of "paged paged-gather dense" (paged: medians of 3 processes, each
#               process's decode steps in bench_serving_cuda_paged.steps.paged.N.csv.gz; a
#               mode the CUDA engine refuses is recorded as skipped), (c) the transformers generate
#               anchor on the seed trace
#               (bench/anchors_torch.py serving) and compare-serving, then (b) the heavier trace
#               (256 requests, batch 64, prompts 128-2048, outputs 64-512, paged, prefill chunks of
#               2048 tokens: with the seed's 128 a prompt takes up to 16 iterations, one chunk each,
#               and the batch never passes ~42 rows); ~5-6 minutes
#   --serving-only  only the serving steps (no tests, model benchmark or sanitizer; implies --serving)
#   --no-heavy  leave out (b)
# cuBLAS is taken from the machine (CUDA toolkit or the nvidia-cublas Python wheel).
# Logs and JSON go to $OUT when set, else out/gpu_model_check. Nonzero exit if a step failed.
set -u
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
LOG="${OUT:-$ROOT/out/gpu_model_check}"
mkdir -p "$LOG"
BIN="" SHAPE=qwen3-4b BENCH_ARGS="" SAN=1 SERVING=0 SERVING_ONLY=0 HEAVY=1
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) BIN="$2"; shift ;;
    --shape) SHAPE="$2"; shift ;;
    --bench-args) BENCH_ARGS="$2"; shift ;;
    --skip-sanitizer) SAN=0 ;;
    --serving) SERVING=1 ;;
    --serving-only) SERVING=1; SERVING_ONLY=1; SAN=0 ;;
    --no-heavy) HEAVY=0 ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
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

if [ $SERVING_ONLY -eq 0 ]; then
  timeout 60 env OMP_NUM_THREADS="$(nproc)" "$T/test_cuda_backend" > "$LOG/test_cuda_backend.log" 2>&1
  rc=$?; step test_cuda_backend $rc; tail -4 "$LOG/test_cuda_backend.log"
  timeout 90 env PL_CUDA_TEST_BIG=1 OMP_NUM_THREADS="$(nproc)" "$T/test_cuda_model" > "$LOG/test_cuda_model.log" 2>&1
  rc=$?; step test_cuda_model $rc; grep -E "argmax agrees|graphs|FAILED|failed" "$LOG/test_cuda_model.log" | tail -14
  if [ -x "$T/test_cuda_engine" ]; then
    timeout 120 env OMP_NUM_THREADS="$(nproc)" "$T/test_cuda_engine" > "$LOG/test_cuda_engine.log" 2>&1
    rc=$?; step test_cuda_engine $rc; grep -E "agree|FAILED|failed|checks" "$LOG/test_cuda_engine.log" | tail -12
  fi
  # shellcheck disable=SC2086
  timeout 90 env OMP_NUM_THREADS="$(nproc)" "$BIN/bench_model_cuda" --shape "$SHAPE" --json "$LOG/bench_model_cuda.json" $BENCH_ARGS \
    > "$LOG/bench_model_cuda.txt" 2>&1
  rc=$?; step "bench_model_cuda $SHAPE" $rc; cat "$LOG/bench_model_cuda.txt"
fi
if [ $SERVING -eq 1 ]; then
  # (a) the seed trace (bench-serving defaults: 16 requests, batch 4, prompts 128-1024, outputs
  # 32-128): paged, the mode the targets are read in, as the median of 3 processes (one process
  # moved its batch-4 steps by 2.2% against the next on one card, PERF.md session 38);
  # the other modes one process each; exit status 3 = the mode is not supported on CUDA.
  for mode in paged paged-gather dense; do
    out="$LOG/bench_serving_cuda_$mode"
    reps=1 steps=(); [ "$mode" = paged ] && reps=3 steps=(--steps-csv "$out.steps")
    timeout 200 "$BIN/pagellm" bench-serving --device cuda --kv-mode "$mode" --shape "$SHAPE" --repeats $reps \
      "${steps[@]}" --json-output "$out.json" > "$out.txt" 2>&1
    rc=$?
    ls "$out".steps.*.csv > /dev/null 2>&1 && gzip -9f "$out".steps.*.csv
    if [ $rc -eq 3 ] || grep -q "is not supported on --device cuda" "$out.txt"; then
      SUMMARY+=("$(printf '%-28s %s' "bench-serving cuda $mode" "skipped (KV mode not supported on CUDA)")")
    else
      step "bench-serving cuda $mode" $rc
    fi
    [ $rc -eq 124 ] && echo "bench-serving cuda $mode: timed out (200 s)"
    grep -E "^trace:|not supported|^device cuda|^output tok/s|^decode step|^full-batch|^rows per decode|^roofline ceiling" "$out.txt"
  done
  # (c) transformers generate on the same (seed) trace, then the ratio against the target
  if python3 -c 'import torch, transformers' > /dev/null 2>&1; then
    seed_json="$LOG/bench_serving_cuda_paged.json"
    trace_args=()
    [ -s "$seed_json" ] && trace_args=(--trace "$seed_json")
    timeout 240 python3 "$ROOT/bench/anchors_torch.py" serving --shape "$SHAPE" ${trace_args[@]+"${trace_args[@]}"} \
      --json-output "$LOG/anchor_serving.json" > "$LOG/anchor_serving.txt" 2>&1
    rc=$?; step "transformers anchor $SHAPE" $rc; tail -8 "$LOG/anchor_serving.txt"
    if [ $rc -eq 0 ] && [ -s "$seed_json" ]; then
      python3 "$ROOT/bench/anchors_torch.py" compare-serving "$seed_json" "$LOG/anchor_serving.json" \
        > "$LOG/compare_serving.txt" 2>&1
      rc=$?; cat "$LOG/compare_serving.txt"
      if [ $rc -eq 0 ]; then SUMMARY+=("$(printf '%-28s %s' "compare-serving" "ok: >= 10x transformers met")")
      elif [ $rc -eq 3 ]; then SUMMARY+=("$(printf '%-28s %s' "compare-serving" "ran; >= 10x target missed")")
      else step compare-serving $rc; fi
    fi
  else
    SUMMARY+=("$(printf '%-28s %s' "transformers anchor" "skipped (python3 cannot import torch + transformers)")")
  fi
  # (b) the heavier trace: batch 64, 256 requests, prompts 128-2048, outputs 64-512, whole prompts
  # as one chunk (--prefill-step 2048) so that the batch fills to 64
  if [ $HEAVY -eq 1 ]; then
    out="$LOG/bench_serving_cuda_heavy"
    timeout 300 "$BIN/pagellm" bench-serving --device cuda --kv-mode paged --shape "$SHAPE" --repeats 1 \
      --num-seqs 256 --batch-size 64 --min-input-len 128 --max-input-len 2048 --min-output-len 64 \
      --max-output-len 512 --prefill-step 2048 --json-output "$out.json" > "$out.txt" 2>&1
    rc=$?; step "bench-serving cuda heavy" $rc
    [ $rc -eq 124 ] && echo "bench-serving cuda heavy: timed out (300 s)"
    grep -E "^trace:|^device cuda|^output tok/s|^decode step|^full-batch|^rows per decode|^roofline ceiling" "$out.txt"
    [ -s "$out.json" ] && gzip -9f "$out.json" # 1.8 MB of per-request records: kept, compressed
  fi
fi
if [ $SAN -eq 1 ] && command -v compute-sanitizer > /dev/null; then
  timeout 150 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 "$T/test_cuda_backend" > "$LOG/sanitizer_memcheck.log" 2>&1
  rc=$?; [ $rc -eq 124 ] && SUMMARY+=("compute-sanitizer memcheck  timed out (150 s; see log)") || step "compute-sanitizer memcheck" $rc
  tail -3 "$LOG/sanitizer_memcheck.log"
fi
echo "== gpu_model_check summary (logs in $LOG) =="
printf '%s\n' "${SUMMARY[@]}"
exit $status

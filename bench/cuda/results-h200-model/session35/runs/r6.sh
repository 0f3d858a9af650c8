#!/bin/bash
# Run 6: `s35f` = the session's library + the decode attention's units taken every grid-th by a
# CTA (decode_units_order AUTO) instead of in runs (bench_model_cuda --attn-order 1).
# test_cuda_attention (both orders), test_cuda_backend, test_cuda_model; batch 64 at contexts
# 128-2560 and batches 4 and 64 at 512, AUTO against runs, two rounds, separate processes; the heavy
# trace with --prefill-step 2048 and the seed trace.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s35f && tar xJf .carry/s35f/bin.tar.xz -C /tmp/s35f
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
B=/tmp/s35f/bin O=/tmp/o6; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
for t in test_cuda_attention test_cuda_backend test_cuda_model; do
  timeout 240 $B/$t > $O/$t.txt 2>&1; echo "$t rc $?: $(tail -1 $O/$t.txt)"; grep -m8 FAIL $O/$t.txt
done
run() { # name args...
  local n=$1; shift
  timeout 60 $B/bench_model_cuda --only decode --steps 20 "$@" > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^[0-9]+ ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
}
for r in 0 1; do for ord in 0 1; do
  run spread.ord$ord.$r --batches 64 --context 2560 --context-spread 128 --attn-order $ord
  run c512.ord$ord.$r --batches 4,64 --attn-order $ord
done; done
show() { grep -E "^(prefill tok/s|output tok/s|decode step median|decode step / its|rows per decode|decode steps at the full|full-batch decode)" $1 | sed 's/  */ /g' | tr '\n' ';'; echo; }
H="--num-seqs 256 --batch-size 64 --min-input-len 128 --max-input-len 2048 --min-output-len 64 --max-output-len 512 --prefill-step 2048"
timeout 200 $B/pagellm bench-serving --device cuda --kv-mode paged --shape qwen3-4b --repeats 1 $H \
  --json-output $O/heavy2048.json > $O/heavy2048.txt 2>&1; echo "heavy ps2048 rc $?: $(show $O/heavy2048.txt)"
timeout 150 $B/pagellm bench-serving --device cuda --kv-mode paged --shape qwen3-4b --repeats 1 \
  --json-output $O/seed.json > $O/seed.txt 2>&1; echo "seed rc $?: $(show $O/seed.txt)"
gzip -9 $O/heavy*.json
tar czf ${OUT:-/tmp}/r6.tgz -C $O .

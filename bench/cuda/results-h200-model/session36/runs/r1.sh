#!/bin/bash
# Run 1: `s36a` = the committed code + the decode attention's split merge inside the kernel (the last
# split CTA of each (row chunk, KV head, sequence) adds the partials; AUTO at 2-8 splits and one unit
# per CTA). test_cuda_attention, test_cuda_backend, test_cuda_model, test_cuda_engine; batches 1-16 at
# context 512, AUTO (--attn-merge 0) against the merge kernel (--attn-merge 1), two rounds, separate
# processes; the seed trace.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s36a && tar xJf .carry/s36a/bin.tar.xz -C /tmp/s36a
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
B=/tmp/s36a/bin O=/tmp/o1; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
for t in test_cuda_attention test_cuda_backend test_cuda_model test_cuda_engine; do
  timeout 240 env PL_CUDA_TEST_BIG=1 $B/$t > $O/$t.txt 2>&1; echo "$t rc $?: $(tail -1 $O/$t.txt)"; grep -m8 FAIL $O/$t.txt
done
run() { # name args...
  local n=$1; shift
  timeout 90 $B/bench_model_cuda --only decode --steps 20 "$@" > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^[0-9]+ ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
}
for r in 0 1; do for m in 0 1; do
  run m$m.$r --batches 1,2,4,8,16 --attn-merge $m
done; done
show() { grep -E "^(prefill tok/s|output tok/s|decode step median|decode step / its|rows per decode|decode steps at the full|full-batch decode)" $1 | sed 's/  */ /g' | tr '\n' ';'; echo; }
timeout 150 $B/pagellm bench-serving --device cuda --kv-mode paged --shape qwen3-4b --repeats 1 \
  --json-output $O/seed.json > $O/seed.txt 2>&1; echo "seed rc $?: $(show $O/seed.txt)"
tar czf ${OUT:-/tmp}/r1.tgz -C $O .

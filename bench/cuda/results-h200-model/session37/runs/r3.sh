#!/bin/bash
# Run 3: the graphed step's block table rounded up to 4 pages (`s37c`) instead of 8 (`s37b`): at
# 128-token pages a batch whose longest context is 1025-1536 takes a 1536-key table, not 2048,
# and so shorter attention splits. Batch 4 (and 3, 5) at contexts 1100 and 1300 and 300-1100; the
# seed trace, 2 processes each, steps to CSV.
cd "$(dirname "$0")/../../../../.."
for v in s37b s37c; do mkdir -p /tmp/$v && tar xJf .carry/$v/bin.tar.xz -C /tmp/$v; done
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o3; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
show() { grep -E "^(output tok/s|decode step median|decode step / its|full-batch decode)" $1 | sed 's/  */ /g' | tr '\n' ';'; echo; }
for r in 0 1; do for a in "--context 1100" "--context 1300" "--context 1100 --context-spread 300"; do for v in s37b s37c; do
  n=$(echo $a | tr -d ' -').$v.$r; timeout 40 /tmp/$v/bin/bench_model_cuda --only decode --steps 20 --batches 3,4,5 $a > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^[0-9]+ ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
done; done; done
for v in s37c s37b; do
  timeout 150 /tmp/$v/bin/pagellm bench-serving --device cuda --kv-mode paged --shape qwen3-4b --repeats 2 \
    --steps-csv $O/steps.$v > $O/seed.$v.txt 2>&1; echo "seed $v rc $?: $(show $O/seed.$v.txt)"
done
tar czf ${OUT:-/tmp}/r3.tar.gz -C /tmp o3

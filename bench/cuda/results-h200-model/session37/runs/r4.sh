#!/bin/bash
# Run 4: `s37d` = s37c (4-page table rounding) + the contexts rule's fallback (when no split count
# leaves no more units with keys than SMs, the count with the fewest, instead of the shapes'
# heuristic), against `s37b` (8-page rounding, no fallback): batches 3-5 at contexts 1100, 1300,
# 300-1100, 300-1000, 640; the seed trace, 1 process each.
cd "$(dirname "$0")/../../../../.."
for v in s37b s37d; do mkdir -p /tmp/$v && tar xJf .carry/$v/bin.tar.xz -C /tmp/$v; done
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o4; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
show() { grep -E "^(output tok/s|decode step median|decode step / its|full-batch decode)" $1 | sed 's/  */ /g' | tr '\n' ';'; echo; }
for a in "--context 1100" "--context 1300" "--context 1100 --context-spread 300" "--context 1000 --context-spread 300" "--context 640"; do for v in s37b s37d; do
  n=$(echo $a | tr -d ' -').$v; timeout 40 /tmp/$v/bin/bench_model_cuda --only decode --steps 20 --batches 3,4,5 $a > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^[0-9]+ ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
done; done
for v in s37d s37b; do
  timeout 100 /tmp/$v/bin/pagellm bench-serving --device cuda --kv-mode paged --shape qwen3-4b --repeats 1 \
    --steps-csv $O/steps.$v > $O/seed.$v.txt 2>&1; echo "seed $v rc $?: $(show $O/seed.$v.txt)"
done
tar czf ${OUT:-/tmp}/r4.tar.gz -C /tmp o4

#!/bin/bash
# Run 2: `s37b` = s37a with the decode attention's splits from the step's contexts as the default
# (pl_model_options.cuda_attn_splits 0; `--cuda-attn-splits shapes` / `--attn-splits-from shapes`
# the old heuristic) and `bench-serving --steps-csv`. test_cuda_backend and test_cuda_attention;
# the seed trace, 2 processes per rule, every decode step to CSV; batch 4 at contexts 512/640/900,
# default against shapes.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s37b && tar xJf .carry/s37b/bin.tar.xz -C /tmp/s37b
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
B=/tmp/s37b/bin O=/tmp/o2; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
for t in test_cuda_backend test_cuda_attention; do
  timeout 150 $B/$t > $O/$t.txt 2>&1; echo "$t rc $?: $(tail -1 $O/$t.txt)"; grep -m8 FAIL $O/$t.txt
done
show() { grep -E "^(output tok/s|decode step median|decode step / its|full-batch decode)" $1 | sed 's/  */ /g' | tr '\n' ';'; echo; }
for v in contexts shapes; do
  timeout 150 $B/pagellm bench-serving --device cuda --kv-mode paged --shape qwen3-4b --repeats 2 --cuda-attn-splits $v \
    --steps-csv $O/steps.$v > $O/seed.$v.txt 2>&1; echo "seed $v rc $?: $(show $O/seed.$v.txt)"
done
for c in 512 640 900; do for v in contexts shapes; do
  n=c$c.$v; timeout 40 $B/bench_model_cuda --only decode --steps 20 --batches 3,4,5 --context $c --attn-splits-from $v > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^[0-9]+ ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
done; done
tar czf ${OUT:-/tmp}/r2.tar.gz -C /tmp o2

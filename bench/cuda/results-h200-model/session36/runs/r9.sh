#!/bin/bash
# Run 9: `s36e` = the committed library + the split heuristic charging 160 keys when a 4-warp
# DECODE_MMA launch has more units than SMs (batches 3-4 at the graphed 1024-key block table: 4
# splits of 256 instead of 8 of 128). GPU tests; batches 3, 4, 5, 8 at contexts 256, 640 and 900,
# `s35g` (the committed code) against `s36e`, two rounds, separate processes; the seed trace with each.
cd "$(dirname "$0")/../../../../.."
for v in s35g s36e; do mkdir -p /tmp/$v && tar xJf .carry/s36x/$v.tar.xz -C /tmp/$v; done
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o9; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
for t in test_cuda_attention test_cuda_backend test_cuda_model test_cuda_engine; do
  timeout 120 env PL_CUDA_TEST_BIG=1 /tmp/s36e/bin/$t > $O/$t.txt 2>&1; echo "$t rc $?: $(tail -1 $O/$t.txt)"; grep -m8 FAIL $O/$t.txt
done
for r in 0 1; do for c in 256 640 900; do for v in s35g s36e; do
  n=c$c.$v.$r
  timeout 60 /tmp/$v/bin/bench_model_cuda --only decode --steps 20 --batches 3,4,5,8 --context $c > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^[0-9]+ ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
done; done; done
show() { grep -E "^(output tok/s|decode step median|decode step / its|full-batch decode)" $1 | sed 's/  */ /g' | tr '\n' ';'; echo; }
for v in s35g s36e; do
  timeout 100 /tmp/$v/bin/pagellm bench-serving --device cuda --kv-mode paged --shape qwen3-4b --repeats 1 \
    --json-output $O/seed.$v.json > $O/seed.$v.txt 2>&1; echo "seed $v rc $?: $(show $O/seed.$v.txt)"
done
rm -f $O/seed.*.json
tar czf ${OUT:-/tmp}/r9.tgz -C $O .

#!/bin/bash
# Run 1: `s37a` = session 36's code + graph variants per key (a replay whose first segment matches
# another captured variant switches to it; a new variant is captured on the redo of its second
# appearance). GPU tests (test_cuda_model's alternating-splits check, test_cuda_engine); the seed
# trace with the decode attention's splits from the shapes and from the contexts, 3 processes each;
# batch 4 at unequal contexts (--context-spread) with the rule off/on and forced 4/6 splits;
# batches 1, 2, 8, 16, 64 at context 512 with the rule off/on.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s37a && tar xJf .carry/s37a/bin.tar.xz -C /tmp/s37a
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
B=/tmp/s37a/bin O=/tmp/o1; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
for t in test_cuda_model test_cuda_engine; do
  timeout 200 $B/$t > $O/$t.txt 2>&1; echo "$t rc $?: $(tail -1 $O/$t.txt)"; grep -m8 -E "FAIL|alternating" $O/$t.txt
done
show() { grep -E "^(output tok/s|decode step median|decode step / its|full-batch decode)" $1 | sed 's/  */ /g' | tr '\n' ';'; echo; }
for v in shapes contexts; do
  timeout 200 $B/pagellm bench-serving --device cuda --kv-mode paged --shape qwen3-4b --repeats 3 --cuda-attn-splits $v \
    > $O/seed.$v.txt 2>&1; echo "seed $v rc $?: $(show $O/seed.$v.txt)"
done
for sp in 1000:300 800:200 1000:600; do c=${sp%:*} lo=${sp#*:}; for a in "--attn-split-rule 0" "--attn-split-rule 1" "--attn-splits 4" "--attn-splits 6"; do
  n=sp$c-$lo.$(echo $a | tr -d ' -'); timeout 40 $B/bench_model_cuda --only decode --steps 20 --batches 4 --context $c --context-spread $lo $a > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^[0-9]+ ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
done; done
for s in 0 1; do
  n=c512.r$s; timeout 60 $B/bench_model_cuda --only decode --steps 20 --batches 1,2,3,8,16,64 --context 512 --attn-split-rule $s > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^[0-9]+ ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
done
tar czf ${OUT:-/tmp}/r1.tar.gz -C /tmp o1

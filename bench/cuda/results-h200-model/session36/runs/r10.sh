#!/bin/bash
# Run 10 (prepared for the next session; not run in this one, whose device time ran out): `s36g` =
# the session's code, with the decode attention's splits from the step's contexts as an opt-in
# (pl_cuda_attn_options.host_context_lens; `bench_model_cuda --attn-split-rule 1`, `pagellm
# bench-serving --cuda-attn-splits contexts`). The new GPU tests first (test_cuda_attention's
# split_rule and the fixtures with it, test_cuda_backend); batches 3, 4 and 5 at contexts 512, 640,
# 900 and 1024, the rule against the shapes' heuristic, two rounds, separate processes; the seed
# trace with each.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s36g && tar xJf .carry/s36g/bin.tar.xz -C /tmp/s36g
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
B=/tmp/s36g/bin O=${OUT:-/tmp/o10}; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
for t in test_cuda_attention test_cuda_backend; do
  timeout 120 $B/$t > $O/$t.txt 2>&1; echo "$t rc $?: $(tail -1 $O/$t.txt)"; grep -m8 FAIL $O/$t.txt
done
for r in 0 1; do for c in 640 900 512 1024; do for s in 1 0; do
  n=c$c.r$s.$r
  timeout 40 $B/bench_model_cuda --only decode --steps 20 --batches 3,4,5 --context $c --attn-split-rule $s > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^[0-9]+ ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
done; done; done
show() { grep -E "^(output tok/s|decode step median|decode step / its|full-batch decode)" $1 | sed 's/  */ /g' | tr '\n' ';'; echo; }
for v in shapes contexts; do
  timeout 100 $B/pagellm bench-serving --device cuda --kv-mode paged --shape qwen3-4b --repeats 1 --cuda-attn-splits $v \
    > $O/seed.$v.txt 2>&1; echo "seed $v rc $?: $(show $O/seed.$v.txt)"
done

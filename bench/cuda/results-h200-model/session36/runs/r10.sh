#!/bin/bash
# Run 10: `s36f` = the committed library + pl_cuda_attn_options.host_context_lens (the decode
# attention's splits from the step's contexts: the most splits of at most 256 keys, in one wave,
# whose units holding keys are no more than the SMs), opt-in through pl_cuda_backend_attn_split_rule
# (`bench_model_cuda --attn-split-rule 1`). Batches 3, 4 and 5 at contexts 512, 640, 900 and 1024,
# the rule against the shapes' heuristic, one round, separate processes (the device time left).
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s36f && tar xJf .carry/s36f/bin.tar.xz -C /tmp/s36f
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
B=/tmp/s36f/bin O=${OUT:-/tmp/o10}; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
for c in 640 900 512 1024; do for r in 1 0; do
  n=c$c.r$r
  timeout 40 $B/bench_model_cuda --only decode --steps 20 --batches 3,4,5 --context $c --attn-split-rule $r > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^[0-9]+ ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}') $(grep -c 'redone' $O/$n.txt)"
done; done

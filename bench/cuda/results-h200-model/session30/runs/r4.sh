#!/bin/bash
# Session 30, run 4: s30d = s30c + the cluster-summed wide kernel (each tile's K splits one cluster,
# partials added through distributed shared memory, bf16 out; --wide-cl): test_cuda_backend;
# --wide-cl-ab at 60 and 64; s30d with and without it against s29j at 4 and 64; a stamped step.
cd "$(dirname "$0")/../../../../.."
for v in s29j s30d; do mkdir -p /tmp/$v && tar xJf .carry/$v/bin.tar.xz -C /tmp/$v; done
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o4; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
timeout 200 /tmp/s30d/bin/test_cuda_backend > $O/test_cuda_backend.txt 2>&1; echo "test_cuda_backend rc $?: $(tail -1 $O/test_cuda_backend.txt)"; grep -m5 -i "FAIL" $O/test_cuda_backend.txt; grep "wide cl plan" $O/test_cuda_backend.txt | sort -u
timeout 120 /tmp/s30d/bin/bench_model_cuda --only decode --steps 20 --batches 60,64 --wide-cl-ab > $O/clab.txt 2>&1 || echo "clab rc $?"
grep "^wide" $O/clab.txt | awk '{printf "b%s r%s %s %s %s %s\n", $4, $6, $7, $8, $9, $(NF-1)}'
for r in 0 1; do
  for v in s29j s30d s30dc; do
    b=${v%c}; extra=""; [ "$v" = s30dc ] && extra="--wide-cl 1"
    timeout 100 /tmp/$b/bin/bench_model_cuda --only decode --steps 20 --batches 4,64 $extra > $O/$v.$r.txt 2>&1 || echo "$v.$r rc $?"
    echo "$v.$r: $(grep -E '^(4|16|32|56|64) ' $O/$v.$r.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
  done
done
timeout 100 /tmp/s30d/bin/bench_diag --only decode --steps 4 --batches 64 --wide-cl 1 --diag-stamps $O/stamps_cl.txt > $O/diag_cl.txt 2>&1 || echo "diag rc $?"
tar czf ${OUT:-/tmp}/r4.tgz -C $O .

#!/bin/bash
# session 22 final call: scripts/gpu_model_check.sh --serving on the code to commit (a split tile
# GEMM's partials added by the residual add + RMSNorm after it), test_cuda_attention, then three
# interleaved rounds against base (the session-21 committed code) at batches 4, 8, 64.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s22k && tar xJf .carry/s22k/bin.tar.xz -C /tmp/s22k; B=/tmp/s22k/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
L=/tmp/final; mkdir -p $L/model
timeout 120 $B/test_cuda_attention > $L/model/test_cuda_attention.log 2>&1; echo "test_cuda_attention rc $? $(tail -n 1 $L/model/test_cuda_attention.log)"
OUT=$L/model timeout 420 bash scripts/gpu_model_check.sh --bin $B --serving > $L/model/console.txt 2>&1; echo "model check rc $?"
tail -16 $L/model/console.txt
grep -E "^(1|4|64) |LM head alone" $L/model/bench_model_cuda.txt
V=(base model_cuda)
for r in 0 1 2; do for k in 0 1; do v=${V[$(( (k + r) % 2 ))]}
  timeout 60 $B/bench_$v --only decode --batches 4,8,64 > $L/model/ab_$v.$r.txt 2>&1 || echo "ab $v rc $?"
  echo "ab_$v.$r: $(grep -E '^(4|8|64) ' $L/model/ab_$v.$r.txt | awk '{printf "B%s %s (%s) | ", $1, $3, $6}')"
done; done
tar czf $O/fin-model.tgz -C $L model

#!/bin/bash
# Run 5: `s38e` with the ring as committed (`--attn-splits-from ringold`): the decode attention's old
# keys before the PDL wait (default) or after it (--attn-early-ab), and the rope inside the attention
# or in its own kernel (--rope-ab), at batches 3-5 over contexts 640, 900, 500-1000, 500-1100
# (three interleaved rounds in one process each).
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s38e && tar xJf .carry/s38e/bin.tar.xz -C /tmp/s38e; B=/tmp/s38e/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o5; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
for a in "--context 640" "--context 900" "--context 1000 --context-spread 500" "--context 1100 --context-spread 500"; do
  n=$(echo $a | tr -d ' -'); timeout 90 $B/bench_model_cuda --only decode --steps 20 --batches 3,4,5 $a --attn-splits-from ringold --attn-early-ab --rope-ab > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "== $n"; grep -E "round" $O/$n.txt | awk '{print}' | sed 's/q\/k norm + RoPE + K\/V append/rope/' | paste - - - - - - | sed 's/\t/ | /g'
done
tar czf ${OUT:-/tmp}/r5.tgz -C /tmp o5

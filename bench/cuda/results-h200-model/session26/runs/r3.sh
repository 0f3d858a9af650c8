#!/bin/bash
# session 26 run 3: where the step goes today (ed5b096's build, --ablate), batches 4 and 64, two
# processes each: the ceiling of a SwiGLU fused into the gate/up projection.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s26a && tar xJf .carry/s26a/bin.tar.xz -C /tmp/s26a; A=/tmp/s26a/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o3; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
for r in 0 1; do for b in 4 64; do
  timeout 90 $A/bench_model_cuda --only decode --steps 20 --batches $b --ablate > $O/b$b.$r.txt 2>&1 || echo "b$b rc $?"
  echo "b$b.$r: $(grep -E "^$b " $O/b$b.$r.txt | awk '{printf "step %s (%s)", $3, $6}')"; grep "^ablation" $O/b$b.$r.txt | sed 's/ablation: batch [0-9]*, without /  /'
done; done
tar czf ${OUT:-/tmp}/r3.tgz -C $O .

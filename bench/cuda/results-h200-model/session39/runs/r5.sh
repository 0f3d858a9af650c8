#!/bin/bash
# Session 39, run 5: the rope kernel against the fused rope (--rope-ab, three interleaved rounds) at the seed
# trace's 2048-key-table shapes with 6 splits forced, and at batches 3, 5 and 8 over 2048-key tables.
# Binary: .carry/f1 (as run 4). Carry .carry/f1, .carry/cm.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/f1 && tar xJf .carry/f1/bin.tar.xz -C /tmp/f1; B=/tmp/f1/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/or5; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
r() { n=$(echo "$*" | tr -d ' -' | tr ',' '_'); timeout 100 $B/bench_model_cuda --only decode --steps 20 "$@" --rope-ab > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "== $*: $(grep -h 'round' $O/$n.txt | sed 's/q\/k norm + RoPE + K\/V append: //; s/batch [0-9]*, //; s/: step//; s/rope in the attention/fused/' | tr '\n' ' ')"; }
r --contexts 1033,838,688,304 --attn-splits 6
r --contexts 1057,862,712,208 --attn-splits 6
r --contexts 1069,874,724,220
r --contexts 1033,688,304
r --contexts 1033,838,688,304,500
r --contexts 1033,838,688,304,1033,838,688,304
r --contexts 1100,1100,1100,1100
r --contexts 700,600,500,400
tar czf ${OUT:-/tmp}/r5.tgz -C /tmp or5

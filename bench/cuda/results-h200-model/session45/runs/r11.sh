#!/bin/bash
# Session 45, run 11 (prepared for a later session, not run): at batch 64 past 16 rows AUTO keeps three of four weight
# stages before the PDL wait, and the fused MLP issues a third of its ring there (session 31). Run 7 found qkv's
# stages alone slower at batch 64 and all kinds level; at batch 4 only all kinds together gained. So: batch 64 at
# context 512 (the model benchmark's 1.34x) with aa (AUTO), pre-all:15, mlp-pre:6 (the fused MLP's whole ring) and
# both together, via --hooks, in three interleaved rounds of separate processes. .carry/k45 = 14cb0cd's binaries.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/k45 && tar xJf .carry/k45/bin.tar.xz -C /tmp/k45; B=/tmp/k45/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/or11; rm -rf $O; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
for r in 1 2 3; do
  for h in aa pre-all:15 mlp-pre:6 pre-all:15+mlp-pre:6; do
    f=$O/b64_$(echo $h | tr ':+' '-_')_$r.txt
    timeout 90 $B/bench_model_cuda --only decode --batches 64 --steps 20 --hooks $h > $f 2>&1 || echo "$h $r rc $?"
    echo "round $r $h: $(grep -E '^64 ' $f | head -1)"
  done
done
tar czf ${OUT:-/tmp}/r11.tgz -C /tmp or11

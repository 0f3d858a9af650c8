#!/bin/bash
# session 14 run 2: where the fused norm's time goes: PL_DIAG_FUSE 0 fused, 1 consumer unscaled, 2 producer plain + consumer scaled, 3 both plain (no norm at all)
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s14/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
for d in 0 1 2 3; do
  PL_DIAG_FUSE=$d timeout 120 $B/bench_diag --only decode --batches 4,64 --fuse-norm-ab > $O/diag$d.txt 2>&1 || echo "diag $d rc $?"
done
for d in 0 1 2 3; do echo "== diag $d"; grep "add + RMSNorm" $O/diag$d.txt | awk '{printf "B%s r%s %s %s %s\n", $4, $6, $7, $8, $10}' | tr '\n' ' '; echo; done

#!/bin/bash
# session 10 final call: the session's step against the session-9 binary (interleaved), then the full model check (tests, memcheck, model bench, serving)
cd "$(dirname "$0")/../.."
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
M=/tmp/s10f/model; mkdir -p $M
B=$PWD/.carry/s10/bin; OB=$PWD/.carry/cm/bin
for r in 1 2; do
  timeout 45 stdbuf -oL $B/bench_model_cuda --only decode --batches 1,4,64 --steps 15 > $M/ab_new_$r.txt 2>&1; echo "new $r rc $?"
  timeout 45 stdbuf -oL $OB/bench_model_cuda --only decode --batches 1,4,64 --steps 15 > $M/ab_old_$r.txt 2>&1; echo "old $r rc $?"
done
for f in $M/ab_new_1.txt $M/ab_old_1.txt $M/ab_new_2.txt $M/ab_old_2.txt; do echo "== $(basename $f)"; grep -E "^(1|4|64) " $f | cut -c1-75; done
OUT=$M timeout 470 bash scripts/gpu_model_check.sh --bin .carry/s10/bin --serving > $M/console.txt 2>&1; echo "model check rc $?"
tail -16 $M/console.txt
grep -E "^(1|4|64) |= host walk|LM head alone, (4|64) rows" $M/bench_model_cuda.txt | cut -c1-150
tar czf $O/s10f.tgz -C /tmp s10f

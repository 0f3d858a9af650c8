#!/bin/bash
# Session 39, run 4: the seed trace's own batch-4 shapes (bench-serving --steps-csv's contexts column,
# ../seed-trace-steps-cpu.csv: the CPU run's schedule is the GPU's, step for step) replayed in the model
# benchmark (bench_model_cuda --contexts): steps 28 (longest 1021, a 1024-key table) and 40 (1033, a
# 2048-key table) and others past 1024, each with the split sweep; the rope kernel A/B at two of them.
# Binary: .carry/f1 = the session's code with --contexts. Carry .carry/f1, .carry/cm.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/f1 && tar xJf .carry/f1/bin.tar.xz -C /tmp/f1; B=/tmp/f1/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/or4; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
for c in 1021,826,676,292 1033,838,688,304 1009,814,664,280 1057,862,712,208 951,1033,311,582 1069,874,724,220; do
  for rep in 1 2; do
    timeout 100 $B/bench_model_cuda --only decode --steps 20 --contexts $c --attn-split-sweep > $O/sweep.$c.$rep.txt 2>&1 || echo "$c rc $?"
  done
  echo "== $c: $(grep -h 'split sweep' $O/sweep.$c.*.txt | sed 's/attention split sweep: batch 4, //; s/: step//; s/ (heuristic)/ H/' | tr '\n' ' ')"
done
for c in 1033,838,688,304 1057,862,712,208 1021,826,676,292; do
  timeout 100 $B/bench_model_cuda --only decode --steps 20 --contexts $c --rope-ab > $O/rope.$c.txt 2>&1 || echo "$c rc $?"
  echo "== rope $c: $(grep -h 'round' $O/rope.$c.txt | sed 's/q\/k norm + RoPE + K\/V append: //; s/batch 4, //; s/: step//' | tr '\n' ' ')"
done
tar czf ${OUT:-/tmp}/r4.tgz -C /tmp or4

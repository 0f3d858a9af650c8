#!/bin/bash
# Session 29, run 12: s29h = s29g with the qkv extension's phase ends stamped (diagnostic build,
# kind 13 records) and a knob to leave it out: --mlp-qkv-ab at batch 64; one stamped batch-64
# step, read by mlp_phases.py (carried in the archive).
cd "$(dirname "$0")/../../../../.."
for v in s29h; do mkdir -p /tmp/$v && tar xJf .carry/$v/bin.tar.xz -C /tmp/$v; done
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o12; mkdir -p $O
timeout 100 /tmp/s29h/bin/bench_model_cuda --only decode --steps 20 --batches 64 --mlp-qkv-ab > $O/qkvab.txt 2>&1 || echo "qkvab rc $?"
grep "^MLP qkv" $O/qkvab.txt
timeout 100 /tmp/s29h/bin/bench_diag --only decode --steps 4 --batches 64 --diag-stamps $O/stamps.txt > $O/diag.txt 2>&1 || echo "diag rc $?"
python3 /tmp/s29h/bin/mlp_phases.py $O/stamps.txt > $O/phases.txt 2>&1; cat $O/phases.txt
python3 bench/cuda/diag_timeline.py $O/stamps.txt > $O/timeline.txt 2>&1; head -16 $O/timeline.txt; rm -f $O/stamps.txt
tar czf ${OUT:-/tmp}/r12.tgz -C $O .

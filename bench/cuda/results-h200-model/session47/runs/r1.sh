#!/bin/bash
# Session 47, run 1: where a batch-64 step's time goes today (HEAD e2b7492). The model benchmark's batch 64 at
# context 512 (with its host breakdown) twice, then the stamped build's three steps at batch 64 (context 512) read by
# diag_timeline.py (layers 18 and 5). .carry/k47a (bench_model_cuda, bench_diag = the -DPL_DIAG_STAMPS build).
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/k47a && tar xJf .carry/k47a/bin.tar.xz -C /tmp/k47a; B=/tmp/k47a/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o47r1; rm -rf $O; mkdir -p $O; D=bench/cuda/results-h200-model
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
for r in 1 2; do
  timeout 90 $B/bench_model_cuda --only decode --batches 64 --steps 20 --json $O/b64_$r.json > $O/b64_$r.txt 2>&1 || echo "b64 $r rc $?"
  echo "round $r: $(grep -E '^ *64 ' $O/b64_$r.txt | head -1)"
done
grep -E "^batch 64" $O/b64_1.txt
timeout 120 $B/bench_diag --only decode --batches 64 --steps 5 --diag-stamps $O/stamps64.txt > $O/diag64.txt 2>&1 || echo "diag rc $?"
cp=$(grep -o "\"copy_gbps\": [0-9.]*" $O/b64_1.json | head -1 | awk '{print $2}'); cp=${cp:-4200}
python3 bench/cuda/diag_timeline.py $O/stamps64.txt --step 2 --layer 18 --copy $cp > $O/timeline64_l18.txt 2>&1
python3 bench/cuda/diag_timeline.py $O/stamps64.txt --step 2 --layer 5 --copy $cp > $O/timeline64_l5.txt 2>&1
gzip -9 $O/stamps64.txt
cat $O/timeline64_l18.txt | head -60
tar czf ${OUT:-/tmp}/r1.tgz -C /tmp o47r1

#!/bin/bash
# Session 45, run 7: run 6's binary (.carry/k45, pre-all AUTO = all weight stages before the PDL wait up to 16 rows).
# Past 16 rows AUTO keeps the old path: batch 64 at context 512 (the model benchmark; its qkv projection is the tile
# GEMM there) with pre-all:16 (none), 15 (all kinds) and 4 (qkv) in three interleaved rounds of separate processes;
# and pre-all:16 against AUTO over the seed trace's batch-4 schedule once more (another call, maybe another card).
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/k45 && tar xJf .carry/k45/bin.tar.xz -C /tmp/k45; B=/tmp/k45/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/or7; rm -rf $O; mkdir -p $O; D=bench/cuda/results-h200-model
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
for r in 1 2 3; do
  for h in pre-all:16 pre-all:15 pre-all:4; do
    timeout 90 $B/bench_model_cuda --only decode --batches 64 --steps 20 --hooks $h > $O/b64_${h/:/-}_$r.txt 2>&1 || echo "$h $r rc $?"
    echo "round $r $h: $(grep -E '^64 ' $O/b64_${h/:/-}_$r.txt | head -1)"
  done
done
s=$D/session39/seed-trace-steps-cpu.csv; n=$(basename $s .csv)
timeout 150 $B/bench_model_cuda --schedule $s --schedule-ab pre-all:16,aa --schedule-out $O/$n.csv > $O/$n.txt 2>&1; echo "$n rc $?"
grep -E "^schedule|all steps|tables of" $O/$n.txt | sed -e 's/schedule bench.*paired A\/B /AB /' -e 's/: [0-9]* steps.*timed pass:/:/' -e 's/step \/ roofline median //'
gzip -9 $O/*.csv* 2>/dev/null
tar czf ${OUT:-/tmp}/r7.tgz -C /tmp or7

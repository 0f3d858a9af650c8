#!/bin/bash
# Session 47, run 2: three experiments as benchmark hooks (.carry/k47b: HEAD e2b7492 + the hooks), paired per step in
# one process against AUTO: warm:N (the decode attention reads N more old-key tiles per warp into L2 before its PDL
# wait, with real TMA reads into a stage it reloads later; session 34's prefetch instructions gave no hits),
# parts-trigger:N (the add + RMSNorm of partials triggers the next kernel after its loads / before its stores / at its
# end instead of at entry), parts-ctas:N (its CTAs per row); tile-alone:56 as a known reference. Over sched-b64-512,
# warm also over the seed schedule; then a stamped step with warm:2 and parts-trigger:1 for the mechanism.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/k47b && tar xJf .carry/k47b/bin.tar.xz -C /tmp/k47b; B=/tmp/k47b/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o47r2; rm -rf $O; mkdir -p $O; D=bench/cuda/results-h200-model
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
timeout 200 $B/test_cuda_attention > $O/test_cuda_attention.txt 2>&1; echo "test_cuda_attention rc $? $(tail -n 1 $O/test_cuda_attention.txt)"
s=$D/session46/sched-b64-512.csv
L=aa,warm:1,warm:2,warm:4,parts-trigger:1,parts-trigger:2,parts-trigger:3,parts-ctas:5,parts-ctas:2,tile-alone:56,aa
timeout 300 $B/bench_model_cuda --schedule $s --schedule-ab $L --schedule-out $O/b64.csv > $O/b64.txt 2>&1; echo "b64 rc $?"
grep -E "^schedule|all steps" $O/b64.txt | sed -e 's/schedule bench.*paired A\/B /AB /' -e 's/: [0-9]* steps.*timed pass:/:/' -e 's/step \/ roofline median //'
s=$D/session39/seed-trace-steps-cpu.csv
timeout 150 $B/bench_model_cuda --schedule $s --schedule-ab aa,warm:1,warm:2 --schedule-out $O/seed.csv > $O/seed.txt 2>&1; echo "seed rc $?"
grep -E "^schedule|all steps" $O/seed.txt | sed -e 's/schedule bench.*paired A\/B /AB /' -e 's/: [0-9]* steps.*timed pass:/:/' -e 's/step \/ roofline median //'
for h in warm:2 parts-trigger:1; do
  n=$(echo $h | tr ':' '-')
  timeout 100 $B/bench_diag --only decode --batches 64 --steps 5 --hooks $h --diag-stamps $O/stamps_$n.txt > $O/diag_$n.txt 2>&1 || echo "diag $h rc $?"
  python3 bench/cuda/diag_timeline.py $O/stamps_$n.txt --step 2 --layer 18 --copy 4200 > $O/timeline_$n.txt 2>&1
  gzip -9 $O/stamps_$n.txt; echo "== $h"; sed -n 1,22p $O/timeline_$n.txt
done
gzip -9 $O/*.csv* 2>/dev/null
tar czf ${OUT:-/tmp}/r2.tgz -C /tmp o47r2

#!/bin/bash
# Session 47, run 5: the add + RMSNorm of partials with two CTAs per row as AUTO (parts_ctas; .carry/k47d, with HEAD
# e2b7492's bench_model_cuda as bench_head). test_cuda_backend (other counts give the same bits); paired per step
# against the old count (parts-ctas:10 at Qwen3-4B, 16 at Qwen3-8B): sched-b64-512, sched-b64-heavy, the seed schedule;
# then the model benchmark's batches 4 and 64 at context 512, HEAD and this build in separate processes, interleaved.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/k47d && tar xJf .carry/k47d/bin.tar.xz -C /tmp/k47d; B=/tmp/k47d/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o47r5; rm -rf $O; mkdir -p $O; D=bench/cuda/results-h200-model
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
timeout 240 $B/test_cuda_backend > $O/test_cuda_backend.txt 2>&1; echo "test_cuda_backend rc $? $(tail -n 1 $O/test_cuda_backend.txt)"
ab() { # name shape schedule list
  timeout 240 $B/bench_model_cuda --shape $2 --schedule $3 --schedule-ab $4 --schedule-out $O/$1.csv > $O/$1.txt 2>&1; echo "$1 rc $?"
  grep -E "^schedule|all steps" $O/$1.txt | sed -e 's/schedule bench.*paired A\/B /AB /' -e 's/: [0-9]* steps.*timed pass:/:/' -e 's/step \/ roofline median //'
}
ab b64_4b qwen3-4b $D/session46/sched-b64-512.csv aa,parts-ctas:10,parts-ctas:5
ab heavy_4b qwen3-4b $D/session46/sched-b64-heavy.csv parts-ctas:10
ab seed_4b qwen3-4b $D/session39/seed-trace-steps-cpu.csv aa,parts-ctas:10
ab b64_8b qwen3-8b $D/session46/sched-b64-512.csv parts-ctas:16
for r in 1 2; do
  for v in head new; do
    bin=$B/bench_model_cuda; [ $v = head ] && bin=$B/bench_head
    timeout 120 $bin --only decode --batches 4,64 --steps 20 > $O/model_${v}_$r.txt 2>&1 || echo "$v $r rc $?"
    echo "round $r $v: $(grep -E '^ *(4|64) ' $O/model_${v}_$r.txt | awk '{printf "b%s %s ms %sx; ", $1, $3, $6}')"
  done
done
gzip -9 $O/*.csv* 2>/dev/null
tar czf ${OUT:-/tmp}/r5.tgz -C /tmp o47r5

#!/bin/bash
# Session 46, run 4: the sequences ranked on the host and sent with the block table (pl_cuda_attn_rank, the new AUTO),
# so the decode attention's CTAs start their K/V loads without ranking first. Tests (test_cuda_attention: the host's
# ranking and a shuffled one against the reference; test_cuda_backend), then paired per step over sched-b64-512 and
# sched-b64-heavy: order:5 (the kernel ranks, as before), order:4 (reversed, unranked), order:2; then the model
# benchmark's batch 64 (context 512) in separate processes, AUTO and order:5, two rounds. .carry/k46c.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/k46c && tar xJf .carry/k46c/bin.tar.xz -C /tmp/k46c; B=/tmp/k46c/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o46r4; rm -rf $O; mkdir -p $O; D=bench/cuda/results-h200-model
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
for t in attention backend; do
  timeout 200 $B/test_cuda_$t > $O/test_cuda_$t.txt 2>&1; echo "test_cuda_$t rc $? $(tail -1 $O/test_cuda_$t.txt)"
done
for n in b64-512 b64-heavy; do
  s=$D/session46/sched-$n.csv
  timeout 150 $B/bench_model_cuda --schedule $s --schedule-ab aa,order:5,order:4,order:2,order:5 --schedule-out $O/$n.csv > $O/$n.txt 2>&1; echo "$n rc $?"
  grep -E "^schedule|all steps" $O/$n.txt | sed -e 's/schedule bench.*paired A\/B /AB /' -e 's/: [0-9]* steps.*timed pass:/:/' -e 's/step \/ roofline median //'
done
for r in 1 2; do
  for h in aa order:5; do
    f=$O/b64_$(echo $h | tr ':+' '-_')_$r.txt
    timeout 90 $B/bench_model_cuda --only decode --batches 64 --steps 20 --hooks $h > $f 2>&1 || echo "$h $r rc $?"
    echo "round $r $h: $(grep -E '^ *64 ' $f | head -1)"
  done
done
gzip -9 $O/*.csv* 2>/dev/null
tar czf ${OUT:-/tmp}/r4.tgz -C /tmp o46r4

#!/bin/bash
# Session 42, run 1: session 41's prepared form of the qkv partials in the decode attention (no partial loads inside
# the tile loop; patches/next-qkv-parts-outside-tile-loop.diff on 4718dce = .carry/v1). Paired A/Bs against AUTO
# (the partials in the attention) over the seed trace's batch-4 schedule and session 40's batch-8/16 schedules:
# qkv-parts:1 never (the GEMM sums, the committed path), 3 (the GEMM sums and the attention loads stale planes:
# the variant's own cost), 2 (no sums anywhere: wrong values, the tail's worth); test_cuda_backend (bit identity);
# the attention kernels' SASS and resource usage from cuobjdump, for the plain and the partial-reading variant.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/v1 && tar xJf .carry/v1/bin.tar.xz -C /tmp/v1; B=/tmp/v1/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/or1; mkdir -p $O; D=bench/cuda/results-h200-model
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
for s in $D/session39/seed-trace-steps-cpu.csv $D/session40/sched-b8.csv $D/session40/sched-b16.csv; do
  n=$(basename $s .csv)
  case $n in seed*) L=aa,qkv-parts:1,qkv-parts:3,qkv-parts:2,qkv-parts:1,aa;; *b8) L=qkv-parts:1,qkv-parts:3,qkv-parts:1;; *) L=qkv-parts:1;; esac
  timeout 150 $B/bench_model_cuda --schedule $s --schedule-ab $L --schedule-out $O/$n.csv > $O/$n.txt 2>&1; echo "$n rc $?"
  grep -E "^schedule|all steps|tables of" $O/$n.txt | sed -e 's/schedule bench.*paired A\/B /AB /' -e 's/: [0-9]* steps.*timed pass:/:/' -e 's/step \/ roofline median //'
done
timeout 150 $B/test_cuda_backend > $O/test_cuda_backend.log 2>&1; echo "test_cuda_backend rc $?: $(tail -1 $O/test_cuda_backend.log)"
CO=$(command -v cuobjdump || ls /usr/local/cuda/bin/cuobjdump 2>/dev/null)
if [ -n "$CO" ]; then
  $CO --dump-resource-usage $B/bench_model_cuda > $O/resource.txt 2>&1; echo "resource rc $?"
  $CO -sass $B/bench_model_cuda > /tmp/sass.txt 2>&1; echo "sass rc $? $(wc -l < /tmp/sass.txt) lines"
  awk '/Function :/{keep = ($0 ~ /attn|decode/)} keep' /tmp/sass.txt | gzip -9 > $O/sass_attn.txt.gz
  grep -A1 -E "Function.*(attn|decode)" $O/resource.txt | grep -oE "Function [^:]*|REG:[0-9]+|SHARED:[0-9]+" | paste - - - | head -40
fi
tar czf ${OUT:-/tmp}/r1.tgz -C /tmp or1

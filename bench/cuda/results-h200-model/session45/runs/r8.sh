#!/bin/bash
# Session 45, run 8: the commit 14cb0cd (.carry/k45) on another call: test_cuda_backend (its two hook tests now share
# one helper), pre-all:16 (the old path) and aa against AUTO over the seed trace's batch-4 schedule, and the seed trace
# served in paged mode as the full check runs it (3 processes, steps CSV).
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/k45 && tar xJf .carry/k45/bin.tar.xz -C /tmp/k45; B=/tmp/k45/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/or8; rm -rf $O; mkdir -p $O; D=bench/cuda/results-h200-model
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
timeout 200 $B/test_cuda_backend > $O/test_cuda_backend.log 2>&1; echo "test_cuda_backend rc $? $(tail -1 $O/test_cuda_backend.log)"
s=$D/session39/seed-trace-steps-cpu.csv; n=$(basename $s .csv)
timeout 150 $B/bench_model_cuda --schedule $s --schedule-ab pre-all:16,aa --schedule-out $O/$n.csv > $O/$n.txt 2>&1; echo "$n rc $?"
grep -E "^schedule|all steps|tables of" $O/$n.txt | sed -e 's/schedule bench.*paired A\/B /AB /' -e 's/: [0-9]* steps.*timed pass:/:/' -e 's/step \/ roofline median //'
out=$O/bench_serving_cuda_paged
timeout 200 $B/pagellm bench-serving --device cuda --kv-mode paged --shape qwen3-4b --repeats 3 --steps-csv $out.steps --json-output $out.json > $out.txt 2>&1; echo "bench-serving rc $?"
grep -E "^output tok/s|^decode step|^full-batch|^roofline ceiling" $out.txt
python3 -c "
import json; d = json.load(open('$out.json'))
for x in d['samples']['paged']: print('process: full-batch step/roofline %.4f, all steps %.4f, %.1f tok/s' % (x['decode_full_vs_roofline_median'], x['decode_step_vs_roofline_median'], x['output_tok_s']))"
gzip -9 $O/*.csv* $O/*.steps.*.csv 2>/dev/null
tar czf ${OUT:-/tmp}/r8.tgz -C /tmp or8

#!/bin/bash
# Run 2: `s35b` = `s35a` + each decode step's rows in the engine's metrics and bench-serving's
# full-batch fields (the steps at --batch-size rows: their median and median step / roofline).
# test_engine-side checks run on the CPU; here: test_cuda_engine; bench_model_cuda batches 4 and 64
# (the same card's reference); the seed trace twice; the heavy trace with the default prefill step
# (128) and with --prefill-step 2048 (whole prompts, so the batch fills to 64).
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s35b && tar xJf .carry/s35b/bin.tar.xz -C /tmp/s35b
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
B=/tmp/s35b/bin O=/tmp/o2; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
timeout 200 $B/test_cuda_engine > $O/test_cuda_engine.txt 2>&1; echo "test_cuda_engine rc $?: $(tail -1 $O/test_cuda_engine.txt)"
timeout 90 $B/bench_model_cuda --only decode --steps 20 --batches 4,64 > $O/bm.txt 2>&1
echo "bench_model: $(grep -E '^[0-9]+ ' $O/bm.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
show() { grep -E "^(prefill tok/s|output tok/s|decode step median|decode step / its|rows per decode|decode steps at the full|full-batch decode)" $1 | sed 's/  */ /g' | tr '\n' ';'; echo; }
for r in 0 1; do
  timeout 150 $B/pagellm bench-serving --device cuda --kv-mode paged --shape qwen3-4b --repeats 1 \
    --json-output $O/seed.$r.json > $O/seed.$r.txt 2>&1; echo "seed $r rc $?: $(show $O/seed.$r.txt)"
done
H="--num-seqs 256 --batch-size 64 --min-input-len 128 --max-input-len 2048 --min-output-len 64 --max-output-len 512"
timeout 200 $B/pagellm bench-serving --device cuda --kv-mode paged --shape qwen3-4b --repeats 1 $H \
  --json-output $O/heavy.json > $O/heavy.txt 2>&1; echo "heavy rc $?: $(show $O/heavy.txt)"
timeout 200 $B/pagellm bench-serving --device cuda --kv-mode paged --shape qwen3-4b --repeats 1 $H --prefill-step 2048 \
  --json-output $O/heavy2048.json > $O/heavy2048.txt 2>&1; echo "heavy ps2048 rc $?: $(show $O/heavy2048.txt)"
gzip -9 $O/heavy*.json
tar czf ${OUT:-/tmp}/r2.tgz -C $O .

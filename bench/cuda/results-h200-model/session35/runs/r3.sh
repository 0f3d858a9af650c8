#!/bin/bash
# Run 3: `s35c` = `s35b` + the decode attention's runs of units cut by their keys (decode_balance
# AUTO) instead of by count. test_cuda_attention (new: 200 unequal sequences; balanced and
# unbalanced runs of units), test_cuda_backend, test_cuda_model; bench_model_cuda batches 4 and 64
# (uniform contexts), s35c against s35b, two rounds; the heavy trace with --prefill-step 2048 (the
# batch fills to 64 with contexts 128-2560) and the seed trace, s35c against s35b.
cd "$(dirname "$0")/../../../../.."
for b in s35b s35c; do mkdir -p /tmp/$b && tar xJf .carry/$b/bin.tar.xz -C /tmp/$b; done
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o3; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
for t in test_cuda_attention test_cuda_backend test_cuda_model; do
  timeout 240 /tmp/s35c/bin/$t > $O/$t.txt 2>&1; echo "$t rc $?: $(tail -1 $O/$t.txt)"; grep -m8 FAIL $O/$t.txt
done
for r in 0 1; do for b in s35c s35b; do
  timeout 90 /tmp/$b/bin/bench_model_cuda --only decode --steps 20 --batches 4,64 > $O/bm.$b.$r.txt 2>&1
  echo "bench_model $b.$r: $(grep -E '^[0-9]+ ' $O/bm.$b.$r.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
done; done
show() { grep -E "^(prefill tok/s|output tok/s|decode step median|decode step / its|rows per decode|decode steps at the full|full-batch decode)" $1 | sed 's/  */ /g' | tr '\n' ';'; echo; }
H="--num-seqs 256 --batch-size 64 --min-input-len 128 --max-input-len 2048 --min-output-len 64 --max-output-len 512 --prefill-step 2048"
for b in s35c s35b; do
  timeout 200 /tmp/$b/bin/pagellm bench-serving --device cuda --kv-mode paged --shape qwen3-4b --repeats 1 $H \
    --json-output $O/heavy2048.$b.json > $O/heavy2048.$b.txt 2>&1; echo "heavy ps2048 $b rc $?: $(show $O/heavy2048.$b.txt)"
done
timeout 150 /tmp/s35c/bin/pagellm bench-serving --device cuda --kv-mode paged --shape qwen3-4b --repeats 1 \
  --json-output $O/seed.s35c.json > $O/seed.s35c.txt 2>&1; echo "seed s35c rc $?: $(show $O/seed.s35c.txt)"
gzip -9 $O/heavy*.json
tar czf ${OUT:-/tmp}/r3.tgz -C $O .

#!/bin/bash
# Session 39, run 2: the opt-in early exit of the decode attention's CTAs without keys
# (pl_cuda_attn_options.decode_skip_empty; bench_model_cuda --attn-skip-ab). Binaries: .carry/s0 = the
# session's code (skip off by default), .carry/s1 = the same with b->attn_skip = 1 in pl_cuda_backend_create
# (the seed trace has no flag for it). Carry .carry/s0, .carry/s1, .carry/cm.
cd "$(dirname "$0")/../../../../.."
for v in s0 s1; do mkdir -p /tmp/$v && tar xJf .carry/$v/bin.tar.xz -C /tmp/$v; done
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/or2; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
B=/tmp/s0/bin
timeout 150 $B/test_cuda_attention > $O/test_cuda_attention.log 2>&1; echo "test_cuda_attention rc $?: $(tail -1 $O/test_cuda_attention.log)"
timeout 200 /tmp/s1/bin/test_cuda_backend > $O/test_cuda_backend.s1.log 2>&1; echo "test_cuda_backend (skip on) rc $?: $(tail -1 $O/test_cuda_backend.s1.log)"
ab() { grep -E "round" $1 | sed 's/attention skip: //; s/: step//' | paste - - - - - - | sed 's/\t/ | /g'; }
for a in "--context 1100 --context-spread 500" "--context 1000 --context-spread 300" "--context 1100" "--context 640" "--context 512"; do
  n=$(echo $a | tr -d ' -'); timeout 90 $B/bench_model_cuda --only decode --steps 20 --batches 3,4,5 $a --attn-skip-ab > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "== $n"; ab $O/$n.txt
done
timeout 90 $B/bench_model_cuda --only decode --steps 20 --batches 64 --context 512 --attn-skip-ab > $O/b64.txt 2>&1; echo "== b64 c512"; ab $O/b64.txt
show() { grep -E "^(output tok/s|decode step median|decode step / its|full-batch decode)" $1 | sed 's/  */ /g' | tr '\n' ';'; echo; }
for v in s0 s1 s1 s0 s0 s1; do
  n=seed.$v.$((k++))
  timeout 150 /tmp/$v/bin/pagellm bench-serving --device cuda --kv-mode paged --shape qwen3-4b --repeats 1 \
    --steps-csv $O/steps.$n > $O/$n.txt 2>&1; echo "$n rc $?: $(show $O/$n.txt)"
  python3 - $O/steps.$n.paged.*.csv <<'PY'
import csv, sys, statistics as st
rows = [r for r in csv.DictReader(open(sys.argv[1]))]
four = [float(r['ratio']) for r in rows if int(r['rows']) == 4]
lng = [float(r['ratio']) for r in rows if int(r['rows']) == 4 and int(r['context_tokens']) >= 4 * 576]
print(f"  4-row steps {len(four)}: median ratio {st.median(four):.4f} (mean context >= 576: {st.median(lng):.4f}, n {len(lng)})")
PY
done
tar czf ${OUT:-/tmp}/r2.tgz -C /tmp or2

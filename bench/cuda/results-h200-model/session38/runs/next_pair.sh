#!/bin/bash
# Prepared in session 38, not yet run on a GPU: the opt-in pairing of the decode attention's units
# (pl_cuda_attn_options.decode_pair_empty; bench_model_cuda --attn-pair N / --attn-pair-ab): two units
# per CTA, ranked long with short, where at most half the units hold keys, e.g. batch 4 over a
# 2048-key table at contexts 500-1100 (112 of 256), so the CTAs without keys stop holding SM slots.
# Binaries: .carry/p0 = the committed code; .carry/p1 = the same with the pairing on by default
# (src/cuda/backend_cuda.cu, pl_cuda_backend_create: set b->attn_pair = 1), for the seed trace, which
# has no flag for it. Both built as in session 38 (build-gpu, bench_model_cuda linked, stripped,
# tarred to .carry/pN/bin.tar.xz); carry .carry/p0, .carry/p1, .carry/cm.
cd "$(dirname "$0")/../../../../.."
for v in p0 p1; do mkdir -p /tmp/$v && tar xJf .carry/$v/bin.tar.xz -C /tmp/$v; done
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/onp; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
B=/tmp/p0/bin
timeout 120 $B/test_cuda_attention > $O/test_cuda_attention.log 2>&1; echo "test_cuda_attention rc $?: $(tail -1 $O/test_cuda_attention.log)"
timeout 200 /tmp/p1/bin/test_cuda_backend > $O/test_cuda_backend.p1.log 2>&1; echo "test_cuda_backend (pairing on) rc $?: $(tail -1 $O/test_cuda_backend.p1.log)"
ab() { grep -E "round" $1 | sed 's/attention pairs: //; s/: step//' | paste - - - - - - | sed 's/\t/ | /g'; }
for a in "--context 1100 --context-spread 500" "--context 1150 --context-spread 600" "--context 1000 --context-spread 500" "--context 1100" "--context 640" "--context 512"; do
  n=$(echo $a | tr -d ' -'); timeout 90 $B/bench_model_cuda --only decode --steps 20 --batches 3,4,5 $a --attn-pair-ab > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "== $n"; ab $O/$n.txt
done
show() { grep -E "^(output tok/s|decode step median|decode step / its|full-batch decode)" $1 | sed 's/  */ /g' | tr '\n' ';'; echo; }
for v in p0 p1 p1 p0; do
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
tar czf ${OUT:-/tmp}/np.tgz -C /tmp onp

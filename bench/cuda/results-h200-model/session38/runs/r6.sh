#!/bin/bash
# Run 6: `s38f` (= s38e + `--cuda-attn-splits ropekernel`: the committed ring with the q/k norm +
# RoPE + K/V append in its own kernel instead of inside the decode attention). The seed trace,
# committed code (ringold) against the rope kernel, 2 processes each; then --rope-ab at batch 4,
# contexts 256-512, and at batches 1, 2, 6, 8, context 900.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s38f && tar xJf .carry/s38f/bin.tar.xz -C /tmp/s38f; B=/tmp/s38f/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o6; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
show() { grep -E "^(output tok/s|decode step median|decode step / its|full-batch decode)" $1 | sed 's/  */ /g' | tr '\n' ';'; echo; }
for rep in 0 1; do for r in ringold ropekernel; do
  n=seed.$r.$rep
  timeout 150 $B/pagellm bench-serving --device cuda --kv-mode paged --shape qwen3-4b --repeats 1 \
    --cuda-attn-splits $r --steps-csv $O/steps.$n > $O/$n.txt 2>&1; echo "$n rc $?: $(show $O/$n.txt)"
  python3 - $O/steps.$n.paged.*.csv <<'PY'
import csv, sys, statistics as st
rows = [r for r in csv.DictReader(open(sys.argv[1]))]
four = [float(r['ratio']) for r in rows if int(r['rows']) == 4]
lng = [float(r['ratio']) for r in rows if int(r['rows']) == 4 and int(r['context_tokens']) >= 4 * 576]
sht = [float(r['ratio']) for r in rows if int(r['rows']) == 4 and int(r['context_tokens']) < 4 * 576]
print(f"  4-row steps {len(four)}: median ratio {st.median(four):.4f} (mean context >= 576: {st.median(lng):.4f}, n {len(lng)}; below: {st.median(sht):.4f}), all {st.median([float(r['ratio']) for r in rows]):.4f}")
PY
done; done
ab() { grep -E "round" $1 | sed 's/q\/k norm + RoPE + K\/V append: //; s/: step//; s/rope in the attention/fused/; s/rope kernel/kernel/' | paste - - - - - - | sed 's/\t/ | /g'; }
for c in 256 384 512; do n=b4.c$c; timeout 60 $B/bench_model_cuda --only decode --steps 20 --batches 4 --context $c --attn-splits-from ringold --rope-ab > $O/$n.txt 2>&1 || echo "$n rc $?"; echo "== $n"; ab $O/$n.txt; done
n=b1268.c900; timeout 90 $B/bench_model_cuda --only decode --steps 20 --batches 1,2,6,8 --context 900 --attn-splits-from ringold --rope-ab > $O/$n.txt 2>&1 || echo "$n rc $?"; echo "== $n"; ab $O/$n.txt
tar czf ${OUT:-/tmp}/r6.tgz -C /tmp o6

#!/bin/bash
# session 9 run 2: TMA tensor copies in the decode attention: tests, bench old/new interleaved, anchors, model step
cd "$(dirname "$0")/../.."
B=$PWD/.carry/cm/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O; L=/tmp/r2; mkdir -p $L
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
timeout 150 $B/test_cuda_attention_new > $L/test_cuda_attention.txt 2>&1; echo "test_cuda_attention(new) rc $?"; tail -2 $L/test_cuda_attention.txt
for r in 1 2; do
  for v in pagellm pagellm_new; do
    timeout 120 $B/$v bench-attention --device cuda --only decode --json-output $L/bench_${v}_$r.json > $L/bench_${v}_$r.txt 2>&1; echo "$v round $r rc $?"
  done
done
PYTHONUNBUFFERED=1 timeout 150 python3 bench/anchors_torch.py attention --only decode --json-output $L/anchors.json > $L/anchors.log 2>&1; echo "anchors rc $?"
for v in bench_model_cuda bench_model_cuda_new; do timeout 100 stdbuf -oL $B/$v --only decode --batches 1,4,64 > $L/model_$v.txt 2>&1; echo "$v rc $?"; done
tar czf $O/r2.tgz -C /tmp r2
echo "== decode rows (us): variant old1 new1 old2 new2"
python3 - <<'PY'
import json
def rows(f):
    d=json.load(open(f)); rs=d.get('rows') or d.get('results') or d
    return {(r['batch'],r['context'],r['variant']):r for r in rs}
L='/tmp/r2'
R=[rows(f'{L}/bench_{v}_{r}.json') for r in (1,2) for v in ('pagellm','pagellm_new')]
keys=sorted(set().union(*[set(x) for x in R]))
for k in keys:
    vals=[x[k]['median_us'] if k in x else float('nan') for x in R]
    errs=[x[k].get('max_abs_err',float('nan')) if k in x else float('nan') for x in R]
    print(f"{k[0]:4d}x{k[1]:<6d} {k[2]:<30s} "+" ".join(f"{v:8.1f}" for v in vals)+f"  err {errs[1]:.2g}")
a=json.load(open(f'{L}/anchors.json'))
for r in a['rows']:
    print(f"anchor {r['batch']}x{r['context']} {r['backend']} {r.get('gqa','')} {r['median_us']:.1f}")
PY
for v in bench_model_cuda bench_model_cuda_new; do echo "== $v"; grep -E "^(1|4|64) " $L/model_$v.txt | cut -c1-80; done

#!/bin/bash
# session 9 run 4: decode rows of the final build and the FA2/cuDNN anchors, three interleaved rounds
cd "$(dirname "$0")/../.."
B=$PWD/.carry/cm/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O; L=/tmp/r4; mkdir -p $L
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
for r in 1 2 3; do
  timeout 100 $B/pagellm bench-attention --device cuda --only decode --no-check --json-output $L/bench_$r.json > $L/bench_$r.txt 2>&1; echo "bench $r rc $?"
  PYTHONUNBUFFERED=1 timeout 100 python3 bench/anchors_torch.py attention --only decode --json-output $L/anchors_$r.json > $L/anchors_$r.log 2>&1; echo "anchors $r rc $?"
done
tar czf $O/r4.tgz -C /tmp r4
python3 - <<'PY'
import json
L='/tmp/r4'
for r in (1,2,3):
    b={(x['batch'],x['context'],x['variant']):x['median_us'] for x in json.load(open(f'{L}/bench_{r}.json'))['rows']}
    a={(x['batch'],x['context'],x['backend']):x['median_us'] for x in json.load(open(f'{L}/anchors_{r}.json'))['rows'] if x['kind']=='decode'}
    for (B,S) in [(1,8192),(8,4096),(32,4096),(64,8192),(16,32768),(128,1024)]:
        p=b[(B,S,'decode-mma-paged-p128')]; c=b[(B,S,'decode-mma-cpasync-paged-p128')]; t=b[(B,S,'decode-mma-tma-paged-p128')]; ct=b[(B,S,'decode-mma-contiguous')]
        f=a[(B,S,'fa2')]; d=a[(B,S,'cudnn')]
        print(f"round {r} {B:3d}x{S:<6d} auto {p:7.1f} cpasync {c:7.1f} tma {t:7.1f} contig {ct:7.1f} | fa2 {f:7.1f} cudnn {d:7.1f} | x fa2 {f/p:.3f} x cudnn {d/p:.3f}")
PY

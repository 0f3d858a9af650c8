"""Session 38: the decode attention CTAs of stamped batch-4 steps (bench_model_cuda --diag-stamps), by
whether their split holds keys and whether they entered more than 2 us before their PDL wait:
entry to exit, wait to exit, and their wait after the launch's first.
usage: attn_units.py STAMPS.gz CONTEXTS(comma-separated) CHUNK SPLITS (one unit per CTA, splits fastest)"""
import gzip, sys, statistics as st
from collections import defaultdict
path, ctxs = sys.argv[1], [int(x) for x in sys.argv[2].split(',')]
chunk = int(sys.argv[3]); splits = int(sys.argv[4])
recs = []
for line in gzip.open(path, 'rt'):
    if line.startswith('#') or not line.strip(): continue
    f = [int(x) for x in line.split()]
    B, s, kind, a, b, c, bx, by, smid, te, tw, tm, tx = f
    if s != 2: continue
    recs.append(dict(kind=kind, bx=bx, sm=smid, te=te, tw=tw, tx=tx))
att = sorted([r for r in recs if r['kind'] == 2], key=lambda r: r['te'])
grid = len({r['bx'] for r in att})
L = [att[i:i+grid] for i in range(0, len(att), grid)]
rows = defaultdict(list)
for lay in L[4:32]:
    w0 = min(r['tw'] for r in lay if r['tw'])
    for r in lay:
        sp = r['bx'] % splits; b = r['bx'] // (splits * 8)
        keys = max(0, min(chunk, ctxs[b] - sp * chunk))
        lead = (r['tw'] - r['te']) / 1000  # entry to its own wait release
        cls = 'keyed' if keys else 'empty'
        e = 'early' if lead > 2 else 'late'
        rows[f'{cls} {e} entry->exit'].append((r['tx'] - r['te']) / 1000)
        rows[f'{cls} {e} wait->exit'].append((r['tx'] - r['tw']) / 1000)
        rows[f'{cls} {e} own wait - first wait'].append((r['tw'] - w0) / 1000)
for k in sorted(rows):
    v = rows[k]; print(f"{k:<34} n {len(v):>5}  p10 {sorted(v)[int(.1*len(v))]:6.2f} p50 {st.median(v):6.2f}  p90 {sorted(v)[int(.9*len(v))]:6.2f}  max {max(v):6.2f}")

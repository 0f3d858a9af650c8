"""Per-launch phase times of the fused MLP with its qkv extension from a --diag-stamps file:
kind 12 (entry, wait, h counted, exit) and kind 13 (phase 1 end, partials stored, x counted, qkv
done) records of step 2, paired by block and launch (kind 13 groups of CTAs, each kind-12 record
with the group whose qkv end matches its exit)."""
import sys, gzip, collections, statistics as S
recs = collections.defaultdict(list)
for line in (gzip.open if sys.argv[1].endswith('.gz') else open)(sys.argv[1], 'rt'):
    if line.startswith('#'): continue
    f = line.split()
    if len(f) < 13 or int(f[1]) != 2: continue
    recs[int(f[2])].append((int(f[6]), [int(x) for x in f[9:13]]))
k13 = sorted(recs[13], key=lambda r: r[1][0])
C = max(b for b, _ in k13) + 1 if k13 else 0
launches = [k13[i:i + C] for i in range(0, len(k13), C)]
by_exit = {}
for b, r in recs[12]:
    by_exit.setdefault(b, []).append(r)
rows = []
for L in launches:
    e0 = None; ph = []
    for b, t in L:
        cand = min(by_exit.get(b, []), key=lambda r: abs(r[3] - t[3]), default=None)
        if cand is None: continue
        ph.append(cand + t)
    if not ph: continue
    e0 = min(p[0] for p in ph)
    names = ["entry", "wait", "h counted", "phase 1 end", "partials stored", "x counted", "qkv done", "exit"]
    idx = [0, 1, 2, 4, 5, 6, 7, 3]
    rows.append([(names[j], S.median([p[i] - e0 for p in ph]) / 1e3, max(p[i] - e0 for p in ph) / 1e3) for j, i in enumerate(idx)])
print("%d launches with the qkv extension (%d CTAs each); us after each launch's first entry, means over launches" % (len(rows), C))
print("%-16s %8s %8s" % ("stamp", "median", "max"))
for j in range(8):
    print("%-16s %8.2f %8.2f" % (rows[0][j][0], sum(r[j][1] for r in rows) / len(rows), sum(r[j][2] for r in rows) / len(rows)))

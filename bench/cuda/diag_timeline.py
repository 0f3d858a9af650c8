#!/usr/bin/env python3
"""Reads bench_model_cuda --diag-stamps records (a -DPL_DIAG_STAMPS build: one line per CTA of
every instrumented kernel in a serving step) and prints, per batch, where the step's time goes:
each launch's span from the previous launch's last exit to its own (these add up to the step
from the first CTA's entry to the last exit), summed per kernel kind, with the projections'
bytes over that span; one layer's launches CTA by CTA (entries, PDL waits, first stage, exits);
the exits of each projection's CTAs (how long its tail is); and where each launch's CTAs ran
(how many SMs, how many of them held two or more CTAs of the launch, and how long those ran).

usage: diag_timeline.py FILE[.gz] [--step N] [--layer L] [--copy GBPS]

The records come from a diagnostic build (src/cuda/diag_stamps.cuh), e.g.
  cmake -S . -B build-diag -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_FLAGS=-DPL_DIAG_STAMPS
  ninja -C build-diag
  gcc -O2 -std=c11 -fopenmp -DPL_DIAG_STAMPS -Iinclude -Isrc -I/usr/local/cuda/include \
      bench/cuda/bench_model_cuda.c build-diag/libpagellm.a ... (the libraries of bench_model_cuda)
  bench_model_cuda --only decode --batches 4 --diag-stamps stamps.txt
The stamps add a few us per kernel (the step ran ~9% longer), so read them as a shape of the
step, not its time.
"""
import gzip
import sys
from collections import defaultdict

KIND = {1: "gemm", 2: "attention", 3: "split merge", 4: "add+rmsnorm", 5: "swiglu", 7: "embed", 8: "argmax finish",
        9: "rmsnorm", 10: "add+rmsnorm (generic)", 11: "add+rmsnorm (parts)", 12: "mlp (fused)"}


def gemm_name(n, k, hidden):
    if n > 100000:
        return "lm_head"
    if k == hidden and hidden < n < 3 * hidden:
        return "qkv"
    if n == hidden and k < 2 * hidden:
        return "o"
    if n == hidden:
        return "down"
    return "gate_up"


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * (len(v) - 1) + 0.5))]


def per_launch(launches, names):
    """for each name with launches: (name, its launches, [(launch, its CTAs, the first PDL wait or entry)])"""
    for name in names:
        Ls = [L for L in launches if L["name"] == name]
        if Ls:
            yield name, Ls, [(L, L["ctas"], L["wait0"] if L["wait0"] is not None else L["entry0"]) for L in Ls]


def main():
    args = sys.argv[1:]
    path = args[0]
    step = int(args[args.index("--step") + 1]) if "--step" in args else 2
    layer = int(args[args.index("--layer") + 1]) if "--layer" in args else 18
    copy = float(args[args.index("--copy") + 1]) if "--copy" in args else 4230.0
    recs = defaultdict(list)
    for line in (gzip.open(path, "rt") if path.endswith(".gz") else open(path)):
        if line.startswith("#") or not line.strip():
            continue
        f = [int(x) for x in line.split()]
        B, s, kind, a, b, c, bx, by, smid, te, tw, tm, tx = f
        if s != step:
            continue
        recs[B].append(dict(kind=kind, a=a, b=b, c=c, bx=bx, by=by, sm=smid, te=te, tw=tw, tm=tm, tx=tx))
    for B in sorted(recs):
        R = recs[B]
        t0 = min(r["te"] for r in R)
        for r in R:
            for k in ("te", "tw", "tm", "tx"):
                r[k] = (r[k] - t0) / 1000.0 if r[k] else None
        # o / down have N = hidden (the fused MLP's records carry (hidden, inter) too)
        hidden = min(r["a"] for r in R if r["kind"] in (1, 12))
        groups = defaultdict(list)
        for r in R:
            groups[(r["kind"], r["a"], r["b"])].append(r)
        launches = []
        for key, rs in groups.items():
            grid = len({(r["bx"], r["by"]) for r in rs})
            rs.sort(key=lambda r: r["te"])
            if len(rs) % grid:
                print(f"batch {B}: kind {key}: {len(rs)} records not a multiple of the grid {grid}")
            for i in range(0, len(rs), grid):
                chunk = rs[i:i + grid]
                name = gemm_name(key[1], key[2], hidden) if key[0] == 1 else KIND.get(key[0], str(key[0]))
                if key[0] == 12 and chunk[0]["c"] >> 32:  # the wide kernel: (n, k) of one projection
                    name = gemm_name(key[1], key[2], hidden)
                launches.append(dict(name=name, key=key, ctas=chunk, n=len(chunk)))
        launches.sort(key=lambda L: min(r["te"] for r in L["ctas"]))
        prev_end = 0.0
        per = defaultdict(lambda: [0, 0.0, 0.0])  # count, span sum, bytes
        for L in launches:
            cs = L["ctas"]
            L["entry0"] = min(r["te"] for r in cs)
            L["entry1"] = max(r["te"] for r in cs)
            ws = [r["tw"] for r in cs if r["tw"] is not None]
            L["wait0"] = min(ws) if ws else None
            L["end"] = max(r["tx"] for r in cs)
            L["span"] = L["end"] - prev_end
            prev_end = max(prev_end, L["end"])
            if L["key"][0] == 1 or (L["key"][0] == 12 and L["ctas"][0]["c"] >> 32):
                L["bytes"] = L["key"][1] * L["key"][2] * 2
            else:
                L["bytes"] = 0
            p = per[L["name"]]
            p[0] += 1
            p[1] += L["span"]
            p[2] += L["bytes"]
        total = prev_end
        print(f"\n== batch {B}, step {step}: {len(R)} CTA records, {len(launches)} launches, first entry to last exit {total:.1f} us")
        print(f"{'kind':<22}{'launches':>9}{'span us':>10}{'us each':>9}{'share':>7}{'bytes us':>10}{'x bytes':>8}")
        for name, (n, sp, by) in sorted(per.items(), key=lambda kv: -kv[1][1]):
            bt = by / (copy * 1e3)  # us at the copy rate
            print(f"{name:<22}{n:>9}{sp:>10.1f}{sp / n:>9.2f}{sp / total:>7.1%}{bt:>10.1f}{(sp / bt if bt else 0):>8.2f}")
        # one layer: the layer-th qkv and what follows up to the next qkv
        qkv_idx = [i for i, L in enumerate(launches) if L["name"] == "qkv"]
        if layer < len(qkv_idx):
            i0 = qkv_idx[layer]
            i1 = qkv_idx[layer + 1] if layer + 1 < len(qkv_idx) else len(launches)
            base = launches[i0 - 1]["end"] if i0 else 0.0
            print(f"\nlayer {layer}, us after the previous launch's last exit ({base:.1f}):")
            print(f"{'launch':<14}{'CTAs':>6}{'1st in':>8}{'last in':>8}{'1st wait':>9}{'med wait':>9}{'med 1st':>8}"
                  f"{'exit p10':>9}{'p50':>7}{'p90':>7}{'last':>7}{'span':>7}")
            for L in launches[i0:i1]:
                cs = L["ctas"]
                ws = [r["tw"] for r in cs if r["tw"] is not None]
                ms = [r["tm"] for r in cs if r["tm"] is not None]
                ex = [r["tx"] for r in cs]
                f = lambda v: f"{v - base:.2f}" if v is not None else "-"
                print(f"{L['name']:<14}{L['n']:>6}{f(L['entry0']):>8}{f(L['entry1']):>8}{f(min(ws) if ws else None):>9}"
                      f"{f(pct(ws, .5) if ws else None):>9}{f(pct(ms, .5) if ms else None):>8}{f(pct(ex, .1)):>9}"
                      f"{f(pct(ex, .5)):>7}{f(pct(ex, .9)):>7}{f(max(ex)):>7}{L['span']:>7.2f}")
        # the projections' tails, averaged over the layers
        print("\nprojections over the layers (means, us): from the wait released (first CTA past it) to the exits")
        print(f"{'gemm':<9}{'CTAs':>6}{'wait->p50 exit':>15}{'->p90':>7}{'->last':>8}{'CTA run p50':>12}{'run max':>8}"
              f"{'late CTAs':>10}{'bytes us':>9}")
        for name, Ls, each in per_launch(launches, ("qkv", "o", "gate_up", "down", "lm_head")):
            a = defaultdict(float)
            for L, cs, w0 in each:
                ex = [r["tx"] for r in cs]
                run = [r["tx"] - max(r["te"], w0) for r in cs]
                a["p50"] += pct(ex, .5) - w0
                a["p90"] += pct(ex, .9) - w0
                a["last"] += max(ex) - w0
                a["run50"] += pct(run, .5)
                a["runmax"] += max(run)
                a["late"] += sum(1 for r in cs if r["te"] > w0 + 1.0)
            n = len(Ls)
            bt = Ls[0]["bytes"] / (copy * 1e3)
            print(f"{name:<9}{Ls[0]['n']:>6}{a['p50'] / n:>15.2f}{a['p90'] / n:>7.2f}{a['last'] / n:>8.2f}{a['run50'] / n:>12.2f}"
                  f"{a['runmax'] / n:>8.2f}{a['late'] / n:>10.1f}{bt:>9.2f}")
        # where each launch's CTAs ran: a CTA shares its SM when another CTA of the same launch
        # ran there too; its run is from the later of its entry and the first PDL wait to its exit
        print("\nplacement over the layers (means): SMs a launch's CTAs ran on, SMs with two or more of them,"
              "\nand the slowest run (us) of a CTA alone on its SM and of one sharing it")
        print(f"{'launch':<11}{'CTAs':>6}{'SMs':>7}{'shared':>8}{'alone max':>11}{'shared max':>12}{'wait->last':>12}")
        for name, Ls, each in per_launch(launches, ("qkv", "attention", "o", "gate_up", "down")):
            a = defaultdict(float)
            for L, cs, w0 in each:
                per_sm = defaultdict(int)
                for r in cs:
                    per_sm[r["sm"]] += 1
                run = [(r["tx"] - max(r["te"], w0), per_sm[r["sm"]] > 1) for r in cs]
                a["sms"] += len(per_sm)
                a["shared"] += sum(1 for v in per_sm.values() if v > 1)
                a["alone"] += max([d for d, sh in run if not sh], default=0.0)
                a["sharedmax"] += max([d for d, sh in run if sh], default=0.0)
                a["span"] += max(r["tx"] for r in cs) - w0
            n = len(Ls)
            print(f"{name:<11}{Ls[0]['n']:>6}{a['sms'] / n:>7.1f}{a['shared'] / n:>8.1f}{a['alone'] / n:>11.2f}"
                  f"{a['sharedmax'] / n:>12.2f}{a['span'] / n:>12.2f}")


if __name__ == "__main__":
    main()

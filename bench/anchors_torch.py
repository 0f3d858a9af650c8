#!/usr/bin/env python3
"""Same-run anchors for the CUDA attention benchmark, and the comparison table.

  anchors_torch.py attention --json-output FILE [--quick] [--iters N]
      torch scaled_dot_product_attention with the FLASH_ATTENTION (FA2) and CUDNN_ATTENTION
      backends on dense contiguous K/V, the shapes of `pagellm bench-attention --device cuda`
      (Qwen3-4B heads 32/8, head_dim 128, bf16), timed with CUDA events around CUDA-graph
      replays (eager if capture fails), inputs rotated past the L2; plus the device-to-device
      copy and an 8192^3 bf16 matmul as ceilings.
  anchors_torch.py compare PAGELLM_JSON ANCHORS_JSON
      prints pagellm / anchor ratios for every row and the issue's targets.

bench_attention() is importable, for other anchor scripts (e.g. a transformers generate anchor).
"""
import argparse
import json
import math
import statistics
import sys

HQ, HKV, HD = 32, 8, 128
DECODE = [(1, 8192), (8, 4096), (32, 4096), (64, 8192), (16, 32768), (128, 1024)]
PREFILL = [1024, 2048, 4096, 8192, 16384]
CHUNK_Q = [128, 512]
CHUNK_CTX = [1024, 4096, 8192]


def shapes(quick=False):
    """(kind, batch, query_len, context) in the order of the pagellm benchmark."""
    out = []
    dec = [DECODE[0], DECODE[3]] if quick else DECODE
    out += [("decode", b, 1, s) for b, s in dec]
    out += [("prefill-static", 16384 // s, s, s) for s in ([8192] if quick else PREFILL)]
    for q in CHUNK_Q:
        for c in ([8192] if quick else CHUNK_CTX):
            if q <= c:
                out.append(("prefill-chunk", 4, q, c))
    return out


def _time(torch, fns, iters, warmup):
    """Median microseconds of fns[i % len(fns)]() between CUDA events."""
    ts = []
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for i in range(warmup + iters):
        s.record()
        fns[i % len(fns)]()
        e.record()
        e.synchronize()
        if i >= warmup:
            ts.append(s.elapsed_time(e) * 1e3)
    return statistics.median(ts)


def _graphed(torch, fn):
    fn()  # warm up outside the capture (cuDNN plans, workspaces)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    return g.replay


def ceilings(torch):
    n = 1 << 30
    a = torch.empty(n, dtype=torch.uint8, device="cuda").random_(0, 255)
    b = torch.empty_like(a)
    us = _time(torch, [lambda: b.copy_(a)], 10, 3)
    copy_gbps = 2 * n / (us * 1e-6) / 1e9
    m = 8192
    x = torch.randn(m, m, device="cuda", dtype=torch.bfloat16)
    y = torch.randn(m, m, device="cuda", dtype=torch.bfloat16)
    us = _time(torch, [lambda: torch.matmul(x, y)], 10, 3)
    return {"copy_gbps": copy_gbps, "gemm_bf16_tflops": 2 * m ** 3 / (us * 1e-6) / 1e12}


def bench_attention(quick=False, iters=50, warmup=5, rotate_bytes=256 << 20, log=sys.stderr):
    """Returns the anchors report (a dict) for the benchmark shapes."""
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    try:
        from torch.nn.attention.bias import causal_lower_right
    except ImportError:  # older torch
        causal_lower_right = None

    dev = "cuda"
    report = {"command": "anchors-torch", "torch": torch.__version__, "gpu": torch.cuda.get_device_name(0),
              "ceilings": ceilings(torch), "rows": [],
              "timing": "CUDA events around CUDA-graph replays (eager when capture fails); median"}
    print(f"anchors: {report['gpu']}, torch {torch.__version__}, ceilings {report['ceilings']}", file=log)
    backends = [("fa2", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)]
    for kind, B, L, S in shapes(quick):
        set_bytes = B * HKV * S * HD * 2 * 2
        sets = max(1, min(8, math.ceil(rotate_bytes / set_bytes)))
        g = torch.Generator(device=dev).manual_seed(0)
        qs = [torch.randn(B, HQ, L, HD, device=dev, dtype=torch.bfloat16, generator=g) for _ in range(sets)]
        ks = [torch.randn(B, HKV, S, HD, device=dev, dtype=torch.bfloat16, generator=g) for _ in range(sets)]
        vs = [torch.randn(B, HKV, S, HD, device=dev, dtype=torch.bfloat16, generator=g) for _ in range(sets)]
        pairs = sum((S - L + l + 1) for l in range(L)) if L > 1 else S
        flops = 4.0 * B * HQ * HD * pairs
        for name, be in backends:
            for gqa in ("native", "expanded"):
                row = {"kind": kind, "batch": B, "query_len": L, "context": S, "backend": name, "gqa": gqa}
                try:
                    if gqa == "native":
                        kk, vv, kw = ks, vs, {"enable_gqa": True}
                    else:
                        kk = [k.repeat_interleave(HQ // HKV, dim=1) for k in ks]
                        vv = [v.repeat_interleave(HQ // HKV, dim=1) for v in vs]
                        kw = {}
                    if L == 1:
                        mk = {"is_causal": False}
                    elif L == S:
                        mk = {"is_causal": True}
                    else:
                        if causal_lower_right is None:
                            raise RuntimeError("no causal_lower_right in this torch")
                        mk = {"attn_mask": causal_lower_right(L, S)}
                    outs = [None] * sets

                    def make(i):
                        def f():
                            with sdpa_kernel([be]):
                                outs[i] = F.scaled_dot_product_attention(qs[i], kk[i], vv[i], **mk, **kw)
                        return f
                    fns = [make(i) for i in range(sets)]
                    try:
                        runs = [_graphed(torch, f) for f in fns]
                        row["graph"] = True
                    except Exception as ex:  # capture unsupported: time eagerly
                        torch.cuda.synchronize()
                        runs = fns
                        row["graph"] = False
                        row["graph_error"] = str(ex).splitlines()[0][:200]
                    us = _time(torch, runs, iters, warmup)
                    row.update(median_us=us, gbps=set_bytes / (us * 1e-6) / 1e9, gflops=flops / (us * 1e-6) / 1e9)
                    if gqa == "expanded":
                        del kk, vv
                except Exception as ex:
                    row["error"] = str(ex).splitlines()[0][:200] if str(ex) else type(ex).__name__
                    torch.cuda.synchronize()
                report["rows"].append(row)
                msg = f"{row['median_us']:.1f} us" if "median_us" in row else "error: " + row["error"][:80]
                print(f"anchors: {kind:14s} B{B:<4d} L{L:<6d} S{S:<6d} {name:5s} {gqa:8s} {msg}", file=log)
                if gqa == "native" and "median_us" in row:
                    break  # native GQA works: the expanded copy would only read more bytes
        del qs, ks, vs
        torch.cuda.empty_cache()
    return report


def best_anchor(anchors, kind, B, L, S, backend):
    best = None
    for r in anchors["rows"]:
        if (r["kind"], r["batch"], r["query_len"], r["context"], r["backend"]) == (kind, B, L, S, backend) and "median_us" in r:
            if best is None or r["median_us"] < best["median_us"]:
                best = r
    return best


def compare(pl_path, an_path, out=sys.stdout):
    pl = json.load(open(pl_path))
    an = json.load(open(an_path))
    copy = pl.get("ceilings", {}).get("copy_gbps")
    print(f"pagellm copy ceiling {copy:.0f} GB/s; torch copy {an['ceilings']['copy_gbps']:.0f} GB/s, "
          f"torch bf16 GEMM {an['ceilings']['gemm_bf16_tflops']:.0f} TFLOP/s", file=out)
    print(f"{'kind':14s} {'B':>4s} {'L':>6s} {'S':>6s} {'variant':24s} {'us':>9s} {'GB/s':>7s} {'TFLOP/s':>8s} "
          f"{'fa2 us':>8s} {'x fa2':>6s} {'cudnn us':>8s} {'x cudnn':>7s}", file=out)
    for r in pl["rows"]:
        key = (r["kind"], r["batch"], r["query_len"], r["context"])
        fa = best_anchor(an, *key, "fa2")
        cu = best_anchor(an, *key, "cudnn")
        fx = fa["median_us"] / r["median_us"] if fa else float("nan")
        cx = cu["median_us"] / r["median_us"] if cu else float("nan")
        print(f"{r['kind']:14s} {r['batch']:4d} {r['query_len']:6d} {r['context']:6d} {r['variant']:24s} {r['median_us']:9.1f} "
              f"{r['gbps']:7.0f} {r['gflops'] / 1e3:8.1f} {fa['median_us'] if fa else float('nan'):8.1f} {fx:6.2f} "
              f"{cu['median_us'] if cu else float('nan'):8.1f} {cx:7.2f}", file=out)
    # paged cost: same kernel, page 128 vs one contiguous page per sequence
    print("paged page-128 cost vs contiguous (same kernel):", file=out)
    for r in pl["rows"]:
        if "-paged" not in r["variant"]:
            continue
        base = r["variant"].split("-paged")[0]
        for c in pl["rows"]:
            if c["variant"] == base + "-contiguous" and (c["kind"], c["batch"], c["query_len"], c["context"]) == (
                    r["kind"], r["batch"], r["query_len"], r["context"]):
                print(f"  {r['kind']:14s} B{r['batch']} L{r['query_len']} S{r['context']} {base}: "
                      f"{(r['median_us'] / c['median_us'] - 1) * 100:+.1f}%", file=out)
    targets(pl, an, out)


def targets(pl, an, out=sys.stdout):
    """The issue's targets, judged on the default (AUTO) kernels' paged rows."""
    def row(kind, B, L, S, variant):
        for r in pl["rows"]:
            if (r["kind"], r["batch"], r["query_len"], r["context"], r["variant"]) == (kind, B, L, S, variant):
                return r
        return None

    def ratio(r, backend):
        a = best_anchor(an, r["kind"], r["batch"], r["query_len"], r["context"], backend) if r else None
        return a["median_us"] / r["median_us"] if a and r else float("nan")

    res = []
    d64 = row("decode", 64, 1, 8192, "decode-mma-paged-p128")
    if d64:
        res.append(("decode 64x8192 >= 4000 GB/s", f"{d64['gbps']:.0f} GB/s", d64["gbps"] >= 4000))
        res.append(("decode 64x8192 >= 0.9x cuDNN", f"{ratio(d64, 'cudnn'):.2f}x", ratio(d64, "cudnn") >= 0.9))
    d1 = row("decode", 1, 1, 8192, "decode-mma-paged-p128")
    if d1:
        x = 1 / ratio(d1, "cudnn")
        res.append(("decode 1x8192 latency <= 1.1x cuDNN", f"{x:.2f}x", x <= 1.1))
    for B, S in DECODE:
        r = row("decode", B, 1, S, "decode-mma-paged-p128")
        if r:
            res.append((f"decode {B}x{S} >= 1.0x FA2", f"{ratio(r, 'fa2'):.2f}x", ratio(r, "fa2") >= 1.0))
    p8 = row("prefill-static", 2, 8192, 8192, "mma-paged-p128")
    if p8:
        res.append(("causal prefill 8192 >= 1.0x FA2", f"{ratio(p8, 'fa2'):.3f}x", ratio(p8, "fa2") >= 1.0))
    worst = None
    for r in pl["rows"]:
        if not r["variant"].endswith("-paged-p128") or r["variant"] not in ("decode-mma-paged-p128", "mma-paged-p128"):
            continue
        base = r["variant"].split("-paged")[0]
        c = row(r["kind"], r["batch"], r["query_len"], r["context"], base + "-contiguous")
        if c:
            cost = r["median_us"] / c["median_us"] - 1
            worst = cost if worst is None else max(worst, cost)
    if worst is not None:
        res.append(("paged page 128 cost <= 5% (worst row)", f"{worst * 100:+.1f}%", worst <= 0.05))
    print("targets (AUTO kernels, paged page 128):", file=out)
    for name, val, ok in res:
        print(f"  {'met ' if ok else 'MISS'}  {name:40s} {val}", file=out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("attention", help="time torch SDPA anchors")
    a.add_argument("--json-output", required=True)
    a.add_argument("--quick", action="store_true")
    a.add_argument("--iters", type=int, default=50)
    a.add_argument("--warmup", type=int, default=5)
    c = sub.add_parser("compare", help="pagellm / anchor table")
    c.add_argument("pagellm_json")
    c.add_argument("anchors_json")
    args = ap.parse_args(argv)
    if args.cmd == "attention":
        rep = bench_attention(quick=args.quick, iters=args.iters, warmup=args.warmup)
        with open(args.json_output, "w") as f:
            json.dump(rep, f, indent=1)
    else:
        compare(args.pagellm_json, args.anchors_json)
    return 0


if __name__ == "__main__":
    sys.exit(main())

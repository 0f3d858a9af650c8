#!/usr/bin/env python3
"""Per-kernel time table from an Nsight Compute CSV (no hardware counters needed beyond these).

  ncu --clock-control none --profile-from-start off --csv --page raw \
      --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum PROGRAM ... > k.csv
  python3 bench/cuda/ncu_summary.py k.csv [--top 20]

Groups launches by kernel name (templates folded to the name before '<'), prints launches,
total and mean microseconds, the share of the summed kernel time, and DRAM GB/s.
"""
import csv
import sys
from collections import defaultdict


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    top = int(sys.argv[sys.argv.index("--top") + 1]) if "--top" in sys.argv else 25
    lines = open(sys.argv[1], errors="replace").read().splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith('"ID"')), None)
    if start is None:
        print("no ncu CSV header found in", sys.argv[1])
        return 1
    rows = list(csv.reader(lines[start:]))
    head, units, data = rows[0], rows[1], rows[2:]
    col = {name: i for i, name in enumerate(head)}
    scale = {"ns": 1e-3, "usecond": 1, "us": 1, "msecond": 1e3, "ms": 1e3, "nsecond": 1e-3}
    tu = scale.get(units[col["gpu__time_duration.sum"]], 1e-3)
    bscale = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "KB": 1e3, "MB": 1e6, "GB": 1e9}
    agg = defaultdict(lambda: [0, 0.0, 0.0])
    for r in data:
        if len(r) < len(head):
            continue
        name = r[col["Kernel Name"]].replace("(anonymous namespace)::", "")
        if name.startswith("void "):
            name = name[5:]
        name = name.split("(")[0].split("<")[0].strip()
        name = name or r[col["Kernel Name"]][:48]
        t = float(r[col["gpu__time_duration.sum"]].replace(",", "")) * tu
        b = 0.0
        for m in ("dram__bytes_read.sum", "dram__bytes_write.sum"):
            if m in col:
                b += float(r[col[m]].replace(",", "") or 0) * bscale.get(units[col[m]], 1)
        a = agg[name]
        a[0] += 1
        a[1] += t
        a[2] += b
    total = sum(a[1] for a in agg.values())
    print(f"{len(data)} launches, {total:.1f} us of kernel time")
    print(f"{'kernel':48s} {'launches':>8s} {'total us':>10s} {'mean us':>9s} {'share':>6s} {'DRAM GB/s':>10s}")
    for name, (n, t, b) in sorted(agg.items(), key=lambda kv: -kv[1][1])[:top]:
        print(f"{name[:48]:48s} {n:8d} {t:10.1f} {t / n:9.2f} {t / total:6.1%} {b / (t * 1e-6) / 1e9 if t else 0:10.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Charts from gpuprim_bench's CSV: one PNG per primitive, throughput (GB/s by
the README's bytes model) against size, libgpuprim solid and CUB dashed, one
colour per dtype, with the device-to-device copy as a grey ceiling.

    python3 bench/plot.py build-gpu/bench/bench.csv [-o DIR]

Needs matplotlib (pip install matplotlib); nothing else in the project does.
"""

import argparse
import csv
import os
import sys
from collections import defaultdict

DTYPES = ["i32", "u32", "i64", "u64", "f32", "f64"]


def read_rows(path):
    with open(path, newline="") as f:
        rows = [r for r in csv.DictReader(f)]
    good = [r for r in rows if float(r["ours_us"] or 0) > 0 and float(r["cub_us"] or 0) > 0]
    return rows, good


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("csv", help="CSV written by gpuprim_bench --csv")
    parser.add_argument("-o", "--out", default=None,
                        help="directory for the PNGs (default: next to the CSV)")
    parser.add_argument("--metric", choices=["gbps", "gkeys"], default="gbps",
                        help="y axis: GB/s by the bytes model, or G elements/s")
    args = parser.parse_args()

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("plot.py needs matplotlib: pip install matplotlib")

    rows, good = read_rows(args.csv)
    if not good:
        sys.exit(f"{args.csv}: no timed rows")
    out_dir = args.out or os.path.dirname(os.path.abspath(args.csv))
    os.makedirs(out_dir, exist_ok=True)

    by_prim = defaultdict(list)
    for r in good:
        by_prim[r["primitive"]].append(r)
    bad = [r for r in rows if r["status"] not in ("ok", "skipped")]

    colours = dict(zip(DTYPES, plt.rcParams["axes.prop_cycle"].by_key()["color"]))
    ours_key, cub_key = (("ours_gbps", "cub_gbps") if args.metric == "gbps"
                         else ("ours_gkeys_per_s", "cub_gkeys_per_s"))
    written = []
    for prim, prim_rows in by_prim.items():
        fig, ax = plt.subplots(figsize=(8, 5))
        copy_points = {}
        for dtype in DTYPES:
            pts = sorted((int(r["n"]), float(r[ours_key]), float(r[cub_key]),
                          float(r["copy_gbps"]))
                         for r in prim_rows if r["dtype"] == dtype)
            if not pts:
                continue
            n = [p[0] for p in pts]
            ax.plot(n, [p[1] for p in pts], "-o", ms=3, color=colours[dtype],
                    label=f"{dtype} libgpuprim")
            ax.plot(n, [p[2] for p in pts], "--", color=colours[dtype], alpha=0.7,
                    label=f"{dtype} CUB")
            for p in pts:
                copy_points.setdefault(p[0], []).append(p[3])
        if args.metric == "gbps" and copy_points:
            n = sorted(copy_points)
            ax.plot(n, [max(copy_points[k]) for k in n], ":", color="grey", lw=2,
                    label="D2D copy (read+write)")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("elements")
        ax.set_ylabel("GB/s (bytes model)" if args.metric == "gbps" else "G elements/s")
        failed = sum(1 for r in bad if r["primitive"] == prim)
        ax.set_title(f"{prim}: libgpuprim (solid) vs CUB (dashed)"
                     + (f"  [{failed} rows FAILED]" if failed else ""))
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, ncol=2)
        fig.tight_layout()
        path = os.path.join(out_dir, f"{prim}.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)

    for path in written:
        print(path)
    if bad:
        print(f"note: {len(bad)} rows did not pass (status MISMATCH/FAIL) in {args.csv}")


if __name__ == "__main__":
    main()

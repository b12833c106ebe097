#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Turn the benchmark CSV (gpuprim_bench --csv) into the Markdown tables of
bench/RESULTS.md: one table per primitive, selected sizes, ours vs CUB.
CSVs with the device-time columns (ours_device_us, cub_device_us) get one more
column, "device µs ours / CUB (ratio)"; older CSVs give the tables as before.

usage: bench/results_table.py bench.csv [--all-sizes]
"""
import csv
import sys

SELECTED_LOG2 = {10, 16, 20, 24, 26, 27, 28, 30}


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    all_sizes = "--all-sizes" in sys.argv
    with open(sys.argv[1], newline="") as f:
        reader = csv.DictReader(f)
        rows = [r for r in reader if r["status"] == "ok"]
        has_device = {"ours_device_us", "cub_device_us"} <= set(reader.fieldnames or [])
    primitives = []
    for r in rows:
        if r["primitive"] not in primitives:
            primitives.append(r["primitive"])
    for primitive in primitives:
        sort = primitive.startswith("sort")
        rate = "Gkeys/s ours / CUB" if sort else "GB/s ours / CUB"
        print(f"\n#### {primitive}\n")
        device_head, device_rule = (" device µs ours / CUB (ratio) |", "---:|") if has_device else ("", "")
        print(f"| dtype | n | ours µs | CUB µs | ours/CUB | {rate} | ours % of copy |{device_head}")
        print(f"|---|---|---:|---:|---:|---:|---:|{device_rule}")
        for r in rows:
            if r["primitive"] != primitive:
                continue
            log2n = float(r["log2n"])
            if not all_sizes and round(log2n) not in SELECTED_LOG2 and log2n < 32:
                continue
            n = int(r["n"])
            size = f"2^{round(log2n)}" if 2 ** round(log2n) == n else f"{n:,}"
            if sort:
                speed = f"{float(r['ours_gkeys_per_s']):.2f} / {float(r['cub_gkeys_per_s']):.2f}"
            else:
                speed = f"{float(r['ours_gbps']):.0f} / {float(r['cub_gbps']):.0f}"
            device = f" {device_time(r)} |" if has_device else ""
            print(f"| {r['dtype']} | {size} | {float(r['ours_us']):.2f} | {float(r['cub_us']):.2f} "
                  f"| {float(r['ratio_ours_over_cub']):.2f} | {speed} | {float(r['ours_pct_copy']):.0f}% |"
                  f"{device}")


def device_time(r):
    """Blocked-stream device time per call, ours / CUB (ours/CUB); n/a where the
    CSV leaves it empty or 0 (a call that waits on the host)."""
    ours, cub = (float(r[k] or 0) for k in ("ours_device_us", "cub_device_us"))
    if ours <= 0 or cub <= 0:
        return "n/a"
    return f"{ours:.2f} / {cub:.2f} ({ours / cub:.2f})"


if __name__ == "__main__":
    main()

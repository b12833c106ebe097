#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Compare the before/after csv files of bench/ab_gpu.sh, row by row.

    python3 bench/ab_table.py DIR [--threshold 0.02] [--all] [--relative]

DIR holds ab-<bench>-<base|new>-<round>.csv. A row is identified by its text
columns and its numeric parameters (n; k of top-k; p, the ranks); its times are the columns ending in _us. For each
row and time column: the median over the rounds of each tree and new / base
(below 1: the new tree is faster). The rows printed are those whose ratio
is off 1 by more than the threshold (every row with --all); the summary
gives, per benchmark and time column, the rows within, faster and slower,
and the geometric mean. Columns of the reference (CUB, the device copy) ran
the same code in both trees: their spread is the run's noise.

--relative judges each ours_* column by its ratio divided by the same row's
cub_* ratio (ours_us by cub_us, ours_batched_us by cub_batched_us), for a
machine whose speed drifted between the trees' rounds: CUB's code is the
same in both, so its ratio is that drift. It carries CUB's own noise of
that row too (a CUB row of 30 us can move 10% between two binaries): read it
beside the plain table, not instead. Rows without such a column keep their
plain ratio. The reference columns' own lines are left out.
"""
import argparse
import csv
import math
import os
import re
import statistics
import sys
from collections import defaultdict

NAME = re.compile(r"^ab-(?P<bench>.+)-(?P<tree>base|new)-(?P<round>\d+)\.csv$")
# Numeric columns that identify a row (top-k's k values of one size were one
# row, their times mixed, before k was here).
PARAMETER_COLUMNS = {"n", "k", "p"}
NOT_KEYS = {"status", "note", "log2n", "agree", "count"}


def is_number(text):
    try:
        float(text)
        return True
    except ValueError:
        return False


def read_rows(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        return [], [], []
    columns = list(rows[0].keys())
    keys = [c for c in columns
            if c not in NOT_KEYS and (c in PARAMETER_COLUMNS or not is_number(rows[0][c] or "x"))]
    times = [c for c in columns if c.endswith("_us") and c not in keys]
    return rows, keys, times


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dir")
    parser.add_argument("--threshold", type=float, default=0.02)
    parser.add_argument("--all", action="store_true")
    parser.add_argument("--relative", action="store_true",
                        help="divide each ours_* ratio by the same row's cub_* ratio (the run's drift)")
    args = parser.parse_args()

    # samples[bench][(key, column)][tree] -> list of times
    samples = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    order = defaultdict(list)
    for name in sorted(os.listdir(args.dir)):
        match = NAME.match(name)
        if not match:
            continue
        rows, keys, times = read_rows(os.path.join(args.dir, name))
        bench, tree = match["bench"], match["tree"]
        for row in rows:
            key = tuple((k, row[k]) for k in keys)
            for column in times:
                value = row[column]
                if not is_number(value) or float(value) <= 0:
                    continue
                slot = (key, column)
                if slot not in samples[bench]:
                    order[bench].append(slot)
                samples[bench][slot][tree].append(float(value))
    if not samples:
        sys.exit(f"ab_table.py: no ab-<bench>-<base|new>-<round>.csv files in {args.dir}")

    def median_ratio(trees):
        return statistics.median(trees["new"]) / statistics.median(trees["base"])

    for bench in sorted(samples):
        heading = "new / base" + (", over CUB's new / base where the row has it" if args.relative else "")
        print(f"== {bench} (median of each tree's rounds, us; {heading})")
        summary = defaultdict(lambda: [0, 0, 0, 0.0])  # column -> within, faster, slower, log sum
        for slot in order[bench]:
            key, column = slot
            trees = samples[bench][slot]
            if not trees["base"] or not trees["new"]:
                continue
            base, new = statistics.median(trees["base"]), statistics.median(trees["new"])
            ratio = new / base
            if args.relative:
                if column.startswith("cub"):
                    continue
                reference = samples[bench].get((key, "cub" + column[4:])) if column.startswith("ours") else None
                if reference and reference["base"] and reference["new"]:
                    ratio /= median_ratio(reference)
            counts = summary[column]
            counts[3] += math.log(ratio)
            if abs(ratio - 1) <= args.threshold:
                counts[0] += 1
            elif ratio < 1:
                counts[1] += 1
            else:
                counts[2] += 1
            if args.all or abs(ratio - 1) > args.threshold:
                label = " ".join(value for _, value in key)
                spread = f"base {min(trees['base']):.2f}-{max(trees['base']):.2f}, new {min(trees['new']):.2f}-{max(trees['new']):.2f}"
                print(f"  {label:<44} {column:<18} {base:10.2f} {new:10.2f} {ratio:6.3f}  ({spread})")
        for column, (within, faster, slower, log_sum) in summary.items():
            rows = within + faster + slower
            print(f"  {column}: {rows} rows, {within} within ±{args.threshold:.0%}, {faster} faster, "
                  f"{slower} slower; geometric mean {math.exp(log_sum / rows):.4f}")


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:  # piped into head
        pass

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Match ncu kernel durations (ncu.csv) to the calls in ncu_labels.txt and
print the median duration per call label. A CUB call is one or two kernels
ending with its single-tile kernel; ours is one kernel."""
import csv, statistics, sys
from collections import defaultdict

csv_path, labels_path = sys.argv[1], sys.argv[2]
rows = [r for r in csv.reader(l for l in open(csv_path) if l.startswith('"'))]
head = rows[0]
name_i, metric_i, unit_i, value_i = (head.index(k) for k in ("Kernel Name", "Metric Name", "Metric Unit", "Metric Value"))
kernels = []
for r in rows[1:]:
    if r[metric_i] != "gpu__time_duration.sum":
        continue
    scale = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3}[r[unit_i]]
    kernels.append((r[name_i], float(r[value_i].replace(",", "")) * scale))
calls = defaultdict(list)
k = 0
for line in open(labels_path):
    who, what, n = line.split()
    if who == "ours":
        assert "reduce_kernel" in kernels[k][0], kernels[k]
        calls[(what, int(n), who)].append(kernels[k][1]); k += 1
    else:
        total = 0.0
        while True:
            name, us = kernels[k]; k += 1
            assert "DeviceReduce" in name, name
            total += us
            if "SingleTile" in name:
                break
        calls[(what, int(n), who)].append(total)
assert k == len(kernels), (k, len(kernels))
print("%-7s %10s %10s %10s" % ("what", "n", "ours us", "CUB us"))
for (what, n) in sorted({(w, n) for (w, n, _) in calls}, key=lambda x: (x[0], x[1])):
    o = calls.get((what, n, "ours")); c = calls.get((what, n, "cub"))
    print("%-7s %10d %10s %10s" % (what, n, "%.2f" % statistics.median(o) if o else "-", "%.2f" % statistics.median(c) if c else "-"))

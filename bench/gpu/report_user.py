#!/usr/bin/env python3
"""report_user.py BASE_LOG[,LOG...] NEW_LOG[,LOG...] - two builds of the user
matmuls (bench/gpu/user_matmul.sh run, the rows of bench/gpu/matmul_user.c)
side by side: per kernel and shape the best TFLOP/s of each build's runs,
new / base, and the geometric mean of new / base over every row both have.
A row not checked OK in every run is reported and left out of the mean."""
import math
import re
import sys

ROW = re.compile(r"^(\S+)\s+(\S+)\s+(\d+x\d+x\d+ b?f16)\s+(\S+)\s+(\S+)\s+(\S+)\s+(OK|FAILED)$")


def read(paths):
    best, bad = {}, set()
    for p in paths.split(","):
        for line in open(p, encoding="utf-8", errors="replace"):
            m = ROW.match(line.strip())
            if not m:
                continue
            key = (m.group(1), m.group(3))
            if m.group(7) != "OK" or m.group(5) == "nan":
                bad.add(key)
                continue
            best[key] = max(best.get(key, 0.0), float(m.group(5)))
    return best, bad


base, bad_b = read(sys.argv[1])
new, bad_n = read(sys.argv[2])
logs = []
print("%-24s %-22s %9s %9s %7s" % ("kernel", "shape", "base", "new", "new/base"))
for key in sorted(set(base) | set(new) | bad_b | bad_n):
    if key in bad_b or key in bad_n:
        print("%-24s %-22s FAILED in %s" % (key[0], key[1], "base" if key in bad_b else "new"))
        continue
    b, n = base.get(key), new.get(key)
    if b and n:
        logs.append(math.log(n / b))
        print("%-24s %-22s %9.1f %9.1f %7.3f" % (key[0], key[1], b, n, n / b))
    else:
        print("%-24s %-22s %9s %9s" % (key[0], key[1], b or "-", n or "-"))
if logs:
    g = math.exp(sum(logs) / len(logs))
    print("geomean new/base over %d rows: %.3f (min %.3f, max %.3f)" %
          (len(logs), g, math.exp(min(logs)), math.exp(max(logs))))
print("rows not OK: %d" % len(bad_b | bad_n))

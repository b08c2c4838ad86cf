#!/usr/bin/env python3
"""ws_report.py OUT - the table of bench/gpu/ws.sh: per matmul and attention row the best
TFLOP/s of each pkc form over its two runs (off: pkc's default, ws: --gpu-warp-specialize),
ws / off, each over the peer (cuBLAS; torch SDPA cuDNN), and the runs' spread; rows whose
check failed or that did not run are marked."""
import glob
import json
import os
import re
import sys

out = sys.argv[1]
runs = {}    # (section, row) -> {form: [rates]}
bad = set()  # (section, row, form) whose check failed
peer = {}    # (section, row) -> peer rate


def add(section, row, form, rate, ok=True):
    runs.setdefault((section, row), {}).setdefault(form, []).append(rate)
    if not ok:
        bad.add((section, row, form))


def lines(path):
    return open(path, encoding="utf-8", errors="replace").read().splitlines() if os.path.exists(path) else []


for path in sorted(glob.glob(os.path.join(out, "bench-*-*.txt"))):
    form = os.path.basename(path).split("-")[1]
    for ln in lines(path):
        m = re.match(r"(matmul-b?f16)\s.*?([0-9.]+) TFLOP/s", ln)
        if m:
            add("matmul", "bench_matmul %s 8192x8192x8192" % m.group(1)[7:], form, float(m.group(2)),
                "FAIL" not in ln and "ERROR" not in ln)
for path in sorted(glob.glob(os.path.join(out, "user-*-*.txt"))):
    form = os.path.basename(path).split("-")[1]
    for ln in lines(path):
        f = ln.split()
        if len(f) == 8 and re.match(r"\d+x\d+x\d+$", f[2]):
            add("matmul", "%s %s" % (f[0], f[2]), form, float(f[5]), f[7] == "OK")
for ln in lines(os.path.join(out, "cublas.txt")):
    f = ln.split()
    if len(f) == 6 and f[0].startswith("cublas_"):
        dt = f[0][7:]
        for (section, row) in list(runs):
            if section == "matmul" and row.endswith(" " + f[2]) and ("_" + dt in row or " " + dt + " " in row):
                peer[(section, row)] = float(f[5])
for path in (os.path.join(out, "attn.jsonl"), os.path.join(out, "peers_attn.jsonl")):
    for ln in lines(path):
        try:
            r = json.loads(ln)
        except ValueError:
            continue
        m = re.match(r"(off|ws) run\d+ (d\d+ (?:full|causal))$", r.get("name", ""))
        if m and "rate" in r:
            add("attention", m.group(2), m.group(1), r["rate"], r.get("check", "OK") == "OK")
        m = re.match(r"torch sdpa cudnn (d\d+ (?:full|causal))$", r.get("name", ""))
        if m and "rate" in r:
            peer[("attention", m.group(1))] = r["rate"]

for section, who in (("matmul", "cuBLAS"), ("attention", "cuDNN")):
    rows = sorted(k for k in runs if k[0] == section)
    print("== %s: TFLOP/s, best of each form's runs (spread); peer %s" % (section, who))
    print("%-36s %17s %17s %7s %8s %8s" % ("row", "off", "ws", "ws/off", "off/peer", "ws/peer"))
    for key in rows:
        r, p = runs[key], peer.get(key)
        cell, best = [], {}
        for form in ("off", "ws"):
            v = r.get(form, [])
            best[form] = max(v) if v else None
            mark = " FAILED" if (section, key[1], form) in bad else ""
            spread = 100 * (max(v) - min(v)) / max(v) if v and max(v) > 0 else 0.0
            cell.append("%7.1f (%4.1f%%)%s" % (max(v), spread, mark) if v else "      -")
        ratio = "%7.3f" % (best["ws"] / best["off"]) if best["ws"] and best["off"] else "      -"
        vs = ["%8.3f" % (best[f] / p) if best[f] and p else "       -" for f in ("off", "ws")]
        print("%-36s %17s %17s %s %s %s" % (key[1], cell[0], cell[1], ratio, vs[0], vs[1]))
failed = sorted("%s %s (%s)" % k for k in bad)
print("checks failed: %s" % (", ".join(failed) if failed else "none"))

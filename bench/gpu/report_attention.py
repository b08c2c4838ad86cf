#!/usr/bin/env python3
"""report_attention.py ATTENTION_JSONL - the table of bench/gpu/attention.sh: per shape
(d64 full, d64 causal, d128 full) every pkc run and peer in TFLOP/s, and pkc's best run
over each peer and over the best peer."""
import json
import re
import sys

rows = []
for line in open(sys.argv[1], encoding="utf-8"):
    line = line.strip()
    if line.startswith("{"):
        try:
            rows.append(json.loads(line))
        except ValueError:
            pass
shapes = {}
for r in rows:
    if "rate" not in r:
        print("error row:", r)
        continue
    m = re.search(r"(d\d+ (?:full|causal))$", r["name"])
    if m:
        shapes.setdefault(m.group(1), []).append(r)
for shape, rs in shapes.items():
    print("== %s" % shape)
    pk = [r for r in rs if r["name"].startswith("pkc ")]
    # pkc, base, "<build>[-variant] runN": pkc's builds and variants (attention.sh), not peers
    peers = [r for r in rs if not re.match(r"(pkc|base)[ -]", r["name"]) and not re.search(r" run\d+ ", r["name"])]
    for r in rs:
        extra = " check %s max_abs_err %s" % (r["check"], r["max_abs_err"]) if "check" in r else ""
        print("  %-40s %8.3f ms %8.2f TFLOP/s%s" % (r["name"], r["ms"], r["rate"], extra))
    if pk and peers:
        best = max(r["rate"] for r in pk)
        for p in peers:
            print("  pkc best / %-29s %6.3fx" % (p["name"][: -len(shape) - 1], best / p["rate"]))
        print("  pkc best / best peer                    %6.3fx" % (best / max(p["rate"] for p in peers)))

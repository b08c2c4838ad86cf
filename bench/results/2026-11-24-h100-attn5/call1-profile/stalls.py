import csv, sys, collections
for fn in sys.argv[1:]:
    rows = list(csv.reader(open(fn)))
    hdr = rows[1]; data = rows[2:]
    idx = {h: i for i, h in enumerate(hdr)}
    cols = [h for h in hdr if h.startswith("stall_") and "Not Issued" not in h]
    tot = collections.Counter()
    per = []
    for r in data:
        if len(r) < len(hdr): continue
        s = {c: int(r[idx[c]] or 0) for c in cols}
        tot.update(s)
        per.append((int(r[idx["Warp Stall Sampling (All Samples)"]] or 0), r[idx["Address"]][-5:], r[idx["Source"]].strip()[:70], max(s, key=s.get)))
    T = sum(tot.values())
    print("==", fn, "samples", T)
    for c, v in tot.most_common(12): print(f"  {c:28s} {v:8d} {100*v/T:5.1f}%")
    print("  top instructions:")
    for n, a, src, c in sorted(per, reverse=True)[:25]: print(f"  {n:7d} {100*n/T:5.1f}% {a} {src:70s} {c}")

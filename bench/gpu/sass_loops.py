#!/usr/bin/env python3
"""sass_loops.py A.sass [B.sass] - static census of the wgmma loops in the SASS
of `cuobjdump -sass`: per function, each innermost loop (a backward branch and
its target; not a retry branch's, which starts inside a loop and ends past
it) holding HGMMA: its instructions, those of the uniform datapath
(U*, R2UR) in brackets, and its HGMMA (h).  With B, A's figures -> B's, and the
totals.  Static counts: a branch inside the loop (the copy engine's issuing
thread) counts whole."""
import collections
import re
import sys


def loops(path):
    parts = re.split(r"\n\s*Function : (\S+)\n", open(path, encoding="utf-8").read())
    res = collections.OrderedDict()
    for k in range(1, len(parts), 2):
        ins = [(int(a, 16), t.strip()) for a, t in re.findall(r"/\*([0-9a-f]{4,})\*/\s+(.*?);", parts[k + 1])]
        back = []
        for addr, t in ins:
            m = re.search(r"BRA(?:\.\S+)?\s+(0x[0-9a-f]+)", t)
            if m and int(m.group(1), 16) <= addr:
                back.append((int(m.group(1), 16), addr))

        def body(s, e):
            return [t for a, t in ins if s <= a <= e]

        out = []
        for s, e in back:
            seg = body(s, e)
            if not any("HGMMA" in t for t in seg):
                continue
            # A retry branch (an mbarrier wait's, placed after the kernel's
            # end) jumps back into a loop: its span starts inside the loop's
            # and ends past it.
            if any(s2 < s <= e2 < e for s2, e2 in back):
                continue
            inner = [(s2, e2) for s2, e2 in back if s <= s2 and e2 <= e and (s2, e2) != (s, e)]
            if any(any("HGMMA" in t for t in body(s2, e2)) for s2, e2 in inner):
                continue
            uni = sum(1 for t in seg if re.match(r"(@!?U?P\w+\s+)?(U[A-Z]|R2UR)", t))
            out.append((len(seg), uni, sum("HGMMA" in t for t in seg)))
        if out:
            res[parts[k]] = out
    return res


def fmt(ls):
    return " ".join("%d[%d]h%d" % x for x in ls)


a = loops(sys.argv[1])
b = loops(sys.argv[2]) if len(sys.argv) > 2 else None
ta = tb = 0
for name in list(a) + [n for n in (b or {}) if n not in a]:
    la = a.get(name, [])
    if b is None:
        print("%-40s %s" % (name, fmt(la)))
        continue
    lb = b.get(name, [])
    ta += sum(x[0] for x in la)
    tb += sum(x[0] for x in lb)
    print("%-40s %-26s -> %s" % (name, fmt(la), fmt(lb)))
if b is not None:
    print("all these loops: %d -> %d instructions" % (ta, tb))

#!/usr/bin/env python3
"""debug_records.py PKC_OUT PALLAS_OUT - compares what pkc's host target and Pallas interpret mode
printed with debug_print (test/pallas/debug_print.test).  Each record starts with a line beginning
with '@' (the kernel's formats start so) and runs to the next; jax.debug.print delivers records in
no fixed order, so they are compared by their first word.  Prints one line per record and, when all
are equal, "DEBUG_PRINT OK" (exit 0); otherwise both texts of each differing record (exit 1)."""
import sys


def records(path):
    out, cur = {}, None
    for line in open(path, encoding="utf-8"):
        if line.startswith("@"):
            cur = line.split(" ", 1)[0]
            out[cur] = ""
        if cur is None:
            continue
        out[cur] += line
    return out


def main():
    pkc, pallas = records(sys.argv[1]), records(sys.argv[2])
    ok = bool(pallas)
    for tag in sorted(set(pkc) | set(pallas)):
        same = pkc.get(tag) == pallas.get(tag)
        print("%s: %s" % (tag, "same" if same else "DIFFERS"))
        if not same:
            ok = False
            print("--- pkc\n%s--- pallas\n%s" % (pkc.get(tag, "(none)\n"), pallas.get(tag, "(none)\n")))
    print("DEBUG_PRINT OK" if ok else "DEBUG_PRINT FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

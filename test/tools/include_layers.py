#!/usr/bin/env python3
"""include_layers.py [--compiler DIR] [--readme FILE]

Checks that the #include graph of compiler/ follows the layer order that
compiler/README.md states: a file may include the headers of its own folder
and of the folders before it in the line

    Layer order: `runtime` → `support` → `ir` → ... → `compiler`

(`compiler` is the top folder itself: the driver; `runtime` is runtime/'s
pk_runtime.h, the ABI the generated code calls).  The README's list

    - exception: `cuda/x.c` includes `host/y.h`: why

names the includes that break the order on purpose.  A quoted include is
found in the including file's folder, then in every folder of the layer
order (the Makefile's -I list); build/gen's parser.h belongs to front/.

Prints each violation (file:line: includes header: folder X is above folder
Y) and exits 1 when there is any; an exception that matches no include is
an error too.  Otherwise prints "N includes follow the layer order".
"""
import argparse
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
ORDER = re.compile(r"^Layer order:\s*(.*)$")
EXCEPTION = re.compile(r"^\s*-\s*exception:\s*`([^`]+)`\s+includes\s+`([^`]+)`")
GENERATED = {"parser.h": "front/parser.h"}  # build/gen, made from front/parser.y


def read_readme(path):
    order, exceptions = None, {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = ORDER.match(line)
            if m:
                order = re.findall(r"`([^`]+)`", m.group(1))
            m = EXCEPTION.match(line)
            if m:
                exceptions[(m.group(1), m.group(2))] = "%s:%d" % (path, n)
    if not order:
        sys.exit("%s: no 'Layer order:' line" % path)
    return order, exceptions


def headers(compiler_dir, order):
    """{header name: its path relative to compiler_dir's parent, 'folder/x.h'}"""
    found = {}
    for folder in order:
        if folder == "runtime":
            d = os.path.join(os.path.dirname(compiler_dir), "runtime")
        elif folder == "compiler":
            d = compiler_dir
        else:
            d = os.path.join(compiler_dir, folder)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if name.endswith((".h", ".def")):
                found.setdefault(name, "%s/%s" % (folder, name))
    return found


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    ap = argparse.ArgumentParser()
    ap.add_argument("--compiler", default=os.path.join(root, "compiler"))
    ap.add_argument("--readme", default=None, help="default: COMPILER/README.md")
    args = ap.parse_args()
    compiler_dir = os.path.abspath(args.compiler)
    order, exceptions = read_readme(args.readme or os.path.join(compiler_dir, "README.md"))
    rank = {f: i for i, f in enumerate(order)}
    known = headers(compiler_dir, order)
    known.update({k: v for k, v in GENERATED.items() if k not in known})

    bad, count, used = 0, 0, set()
    for dirpath, dirs, files in os.walk(compiler_dir):
        dirs.sort()
        rel = os.path.relpath(dirpath, compiler_dir)
        folder = "compiler" if rel == "." else rel.split(os.sep)[0]
        if folder not in rank:
            print("compiler/%s: folder '%s' is not in the layer order" % (rel, folder))
            bad += 1
            continue
        for name in sorted(files):
            if not name.endswith((".c", ".h", ".y", ".re", ".def")):
                continue
            path = os.path.join(dirpath, name)
            me = name if folder == "compiler" else "%s/%s" % (folder, name)
            with open(path, encoding="utf-8") as f:
                for n, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    inc = m.group(1)
                    local = os.path.join(dirpath, inc)
                    target = "%s/%s" % (folder, inc) if os.path.exists(local) else known.get(os.path.basename(inc))
                    if target is None:
                        print("%s:%d: includes \"%s\", which is in no folder of the layer order" % (me, n, inc))
                        bad += 1
                        continue
                    count += 1
                    tfolder = target.split("/")[0]
                    if rank[tfolder] <= rank[folder]:
                        continue
                    if (me, target) in exceptions:
                        used.add((me, target))
                        continue
                    print("%s:%d: includes %s: folder %s is above folder %s" % (me, n, target, tfolder, folder))
                    bad += 1
    for key, at in sorted(exceptions.items()):
        if key not in used:
            print("%s: the exception `%s` includes `%s` matches no include that breaks the order" % (at, key[0], key[1]))
            bad += 1
    if bad:
        print("%d problem%s with the layer order" % (bad, "" if bad == 1 else "s"))
        return 1
    print("%d includes follow the layer order (%d exception%s)" % (count, len(used), "" if len(used) == 1 else "s"))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""clause_coverage.py [--compiler DIR] [--tests DIR] [--allow FILE]

Tests as documentation: every diagnostic format in the compiler sources that
names a lang-spec clause (a C string literal, or adjacent literals, holding
`[§N.M]`) must be checked by some test, with its clause.  A format is tested
when its text, with each printf conversion (and each macro between literals,
such as MZ_TARGET) read as "any text", matches a line of a file under the test
directory.  Formats that no input can reach are listed in the allow-list
(one format per line as it appears in the source, `  # ` and the reason).

Prints one line per untested format (file:line: "format") and exits 1 when
there is any; otherwise prints "N clause-tagged formats, all tested".
An allow-list entry that matches no format, or a format that is both allowed
and tested, is an error too, so the list cannot go stale."""
import argparse
import os
import re
import sys

SOURCE_EXT = (".c", ".h", ".y", ".re")
CONVERSION = re.compile(r"%%|%[-+ #0]*(\*|\d+)?(\.(\*|\d+))?(hh|h|ll|l|z|j|t)?[diouxXcsfgeEp]")
ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "'": "'", "0": "\0"}


def string_groups(text):
    """Yields (line, [pieces]) for each run of adjacent string literals; a
    piece is a str (the literal's text) or None (a macro between literals)."""
    i, n, line = 0, len(text), 1
    group, gline, pending = [], 0, []
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            line += text.count("\n", i, j)
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c == "\n":
            line += 1
            i += 1
        elif c.isspace():
            i += 1
        elif c == "'":
            j = i + 1
            while j < n and text[j] != "'":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        elif c == '"':
            j, buf = i + 1, []
            while j < n and text[j] != '"':
                if text[j] == "\\" and j + 1 < n:
                    buf.append(ESCAPES.get(text[j + 1], "\\" + text[j + 1]))
                    j += 2
                else:
                    buf.append(text[j])
                    j += 1
            if not group:
                gline = line
            group.extend(pending)
            pending = []
            group.append("".join(buf))
            line += text.count("\n", i, j)
            i = j + 1
        elif c.isupper() and group:
            # an upper-case macro between two literals (MZ_TARGET, PRId64)
            m = re.match(r"[A-Z_][A-Z0-9_]*", text[i:])
            pending.append(None)
            i += m.end()
        else:
            if group:
                yield gline, group
            group, pending = [], []
            m = re.match(r"\w+", text[i:])
            i += m.end() if m else 1
    if group:
        yield gline, group


def format_text(pieces):
    return "".join("<macro>" if p is None else p for p in pieces)


def format_regex(pieces):
    out = []
    for p in pieces:
        if p is None:
            out.append(".*")
            continue
        pos = 0
        for m in CONVERSION.finditer(p):
            out.append(re.escape(p[pos:m.start()]))
            out.append("%" if m.group() == "%%" else ".*")
            pos = m.end()
        out.append(re.escape(p[pos:]))
    return re.compile("".join(out))


def clause_formats(compiler_dir):
    """{format text: (file:line, regex)} for every clause-tagged format."""
    found = {}
    for root, dirs, files in os.walk(compiler_dir):
        dirs.sort()
        for name in sorted(files):
            if not name.endswith(SOURCE_EXT):
                continue
            path = os.path.join(root, name)
            with open(path, encoding="utf-8") as f:
                text = f.read()
            for line, pieces in string_groups(text):
                fmt = format_text(pieces)
                if "[§" in fmt and fmt not in found:
                    where = "%s:%d" % (os.path.relpath(path, os.path.dirname(compiler_dir)), line)
                    found[fmt] = (where, format_regex(pieces))
    return found


def test_lines(tests_dir):
    """The lines with a clause of every file under tests_dir except its tools/
    (the helper scripts, this check's allow-list and its own inputs)."""
    lines = []
    for root, dirs, files in os.walk(tests_dir):
        if root == tests_dir and "tools" in dirs:
            dirs.remove("tools")
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(root, name)
            try:
                with open(path, encoding="utf-8") as f:
                    lines.extend(l for l in f.read().splitlines() if "§" in l)
            except (UnicodeDecodeError, OSError):
                continue  # binary inputs (invalid UTF-8 tests) hold no checks
    return lines


def read_allow(path):
    allow = {}
    if not path:
        return allow
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            fmt, sep, why = line.partition("  # ")
            if not sep or not why.strip():
                sys.exit("%s:%d: an allow-list entry needs '  # reason'" % (path, n))
            allow[fmt] = "%s:%d" % (path, n)
    return allow


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    ap = argparse.ArgumentParser()
    ap.add_argument("--compiler", default=os.path.join(root, "compiler"))
    ap.add_argument("--tests", default=os.path.join(root, "test"))
    ap.add_argument("--allow", default=os.path.join(here, "clause_coverage.allow"))
    args = ap.parse_args()

    formats = clause_formats(args.compiler)
    allow = read_allow(args.allow)
    lines = test_lines(args.tests)
    bad = 0
    for fmt, (where, rx) in formats.items():
        tested = any(rx.search(l) for l in lines)
        if fmt in allow and tested:
            print('%s: "%s" is tested: remove it from the allow-list (%s)' % (where, fmt, allow[fmt]))
            bad += 1
        elif fmt not in allow and not tested:
            print('%s: no test checks "%s"' % (where, fmt))
            bad += 1
    for fmt, at in allow.items():
        if fmt not in formats:
            print('%s: the allowed format "%s" is not in the sources' % (at, fmt))
            bad += 1
    if bad:
        print("%d of %d clause-tagged formats need attention" % (bad, len(formats)))
        return 1
    print("%d clause-tagged formats, all tested (%d allowed untested)" % (len(formats), len(allow)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

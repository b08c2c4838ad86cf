#!/usr/bin/env python3
"""check_json.py FILE: checks that every line of FILE (a captured stderr)
is one JSON diagnostic object with the expected keys.  Prints "ok", then
"level file line message" per diagnostic, for FileCheck; exits 1 if not."""
import json
import sys

KEYS = {"file", "line", "col", "len", "level", "message"}

with open(sys.argv[1], "rb") as f:
    raw = f.read()
text = raw.decode("utf-8")  # strict: invalid UTF-8 is a failure
lines = text.split("\n")
if lines and lines[-1] == "":
    lines.pop()
if not lines:
    sys.exit("check_json: no diagnostics at all")
out = []
for i, line in enumerate(lines, 1):
    try:
        obj = json.loads(line)
    except ValueError as e:
        sys.exit("check_json: line %d is not JSON (%s): %r" % (i, e, line))
    if not isinstance(obj, dict) or set(obj) != KEYS:
        sys.exit("check_json: line %d has keys %s, expected %s" % (i, sorted(obj), sorted(KEYS)))
    out.append("%s %s %s %s" % (obj["level"], obj["file"], obj["line"], obj["message"]))
print("ok")
print("\n".join(out))

"""Checks a sample's --dump directory without NumPy: every DIR/<param>.npy
is a valid .npy 1.0 file (magic, version, header dict, 64-byte aligned data,
little-endian C order) with the expected dtype and shape, and sizes.json has
exactly the keys "sizes", "scalars", "consts", "bf16".  Prints one line per
file; with --add-check x,y,o also checks o == x + y (f32) element by element.

usage: check_dump.py DIR NAME=DESCR:SHAPE... [--json JSON] [--add-check x,y,o]
  e.g. check_dump.py d x='<f4:(5,)' o='<f4:(5,)' --json '{"sizes": {"n": 5}, ...}'
"""
import array
import ast
import json
import os
import sys


def read_npy(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data[:6] == b"\x93NUMPY", "%s: bad magic" % path
    assert data[6:8] == b"\x01\x00", "%s: not format 1.0" % path
    hlen = data[8] | data[9] << 8
    header = data[10:10 + hlen].decode("latin1")
    assert header.endswith("\n"), "%s: header does not end with a newline" % path
    assert (10 + hlen) % 64 == 0, "%s: data not 64-byte aligned" % path
    d = ast.literal_eval(header.strip())
    assert set(d) == {"descr", "fortran_order", "shape"}, d
    assert d["fortran_order"] is False
    body = data[10 + hlen:]
    size = int(d["descr"][2:])
    count = 1
    for s in d["shape"]:
        count *= s
    assert len(body) == count * size, "%s: %d data bytes for %d elements of %d" % (path, len(body), count, size)
    return d["descr"], tuple(d["shape"]), body


def main():
    args = sys.argv[1:]
    ddir = args.pop(0)
    want_json = None
    add_check = None
    expect = {}
    while args:
        a = args.pop(0)
        if a == "--json":
            want_json = json.loads(args.pop(0))
        elif a == "--add-check":
            add_check = args.pop(0).split(",")
        else:
            name, spec = a.split("=", 1)
            descr, shape = spec.split(":", 1)
            expect[name] = (descr, ast.literal_eval(shape))
    bodies = {}
    for name, (descr, shape) in sorted(expect.items()):
        got_descr, got_shape, body = read_npy(os.path.join(ddir, name + ".npy"))
        assert (got_descr, got_shape) == (descr, shape), "%s: got %s %s, want %s %s" % (
            name, got_descr, got_shape, descr, shape)
        bodies[name] = body
        print("%s.npy: %s %s" % (name, got_descr, got_shape))
    with open(os.path.join(ddir, "sizes.json")) as f:
        js = json.load(f)
    assert list(js) == ["sizes", "scalars", "consts", "bf16"], list(js)
    if want_json is not None:
        assert js == want_json, "sizes.json: got %r, want %r" % (js, want_json)
    print("sizes.json: %s" % json.dumps(js, sort_keys=True))
    if add_check:
        x, y, o = (array.array("f", bodies[n]) for n in add_check)
        assert len(x) == len(y) == len(o)
        bad = [i for i in range(len(o)) if array.array("f", [x[i] + y[i]])[0] != o[i]]
        assert not bad, "o != x + y at %d elements, first %d" % (len(bad), bad[0])
        print("%s == %s + %s: %d elements" % (add_check[2], add_check[0], add_check[1], len(o)))
    print("dump OK")


if __name__ == "__main__":
    main()

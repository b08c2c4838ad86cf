#!/usr/bin/env python3
"""tiled_interp.py - a reference interpreter for the *tiled* IR (the text
form pkc prints after tile-host), to check what lower-refs and tile-host
compute independently of the LLVM back end.

    tiled_interp.py IR_FILE KERNEL --grid G0,G1 --arg NAME=SPEC ... --out NAME[,NAME]

NAME=SPEC binds a body argument:  x=rand:f32:64,32 (seeded random),
x=iota:i32:16, x=zeros:f32:8, x=val:f32:0.5 (a scalar), n=val:i64:100.
Arrays and scalars are bound to the body's arguments by name; the kernel
runs once per program id of the grid (row-major).  Each --out array is
printed as one line of repr'd floats, and with --expect PYEXPR the script
compares against a NumPy expression over the inputs (by name) and exits 1
on a mismatch.  Only scalar code is supported: exactly what tile-host
promises to leave (point loads/stores/atomics, scalar ops, for/if/while).
"""
import argparse
import math
import re
import sys

import numpy as np

DT = {
    "bool": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
    "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
    "f16": np.float16, "bf16": np.float32, "f32": np.float32, "f64": np.float64,
}

# ---- parsing -----------------------------------------------------------------

TYPE_RE = re.compile(r"(?:(ref|local|scratch)<)?(\w+)(?:\[([^\]]*)\])?>?")


class Inst:
    def __init__(self, results, op, attrs, text, regions, rtypes):
        self.results = results  # result names
        self.op = op
        self.attrs = attrs      # dict from {k = v, ...}
        self.text = text        # operand text (after op/attrs)
        self.regions = regions  # list of (argnames, [Inst])
        self.rtypes = rtypes    # result type strings


def split_top(s, sep=","):
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "([<{":
            depth += 1
        elif ch in ")]>}":
            depth -= 1
        if ch == sep and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def parse_attrs(s):
    attrs = {}
    for part in split_top(s):
        if "=" in part:
            k, v = part.split("=", 1)
            attrs[k.strip()] = v.strip()
        else:
            attrs[part.strip()] = True
    return attrs


def parse_region_args(s):
    names = []
    for part in split_top(s):
        names.append(part.split(":")[0].strip())
    return names


class Parser:
    def __init__(self, lines):
        self.lines = lines
        self.pos = 0

    def block(self):
        """Parses instructions up to a closing '}' line (returned, not consumed)."""
        insts = []
        while self.pos < len(self.lines):
            line = self.lines[self.pos].strip()
            if line.startswith("}"):
                return insts
            self.pos += 1
            insts.append(self.inst(line))
        raise SystemExit("unterminated block")

    def inst(self, line):
        results = []
        m = re.match(r"((?:%[\w.]+(?:, )?)+) = (.*)", line)
        if m:
            results = [r.strip() for r in m.group(1).split(",")]
            line = m.group(2)
        op, _, rest = line.partition(" ")
        attrs = {}
        if rest.startswith("{") and op not in ("if",):
            end = rest.index("}")
            attrs = parse_attrs(rest[1:end])
            rest = rest[end + 1:].strip()
        regions = []
        if op in ("for", "if", "while"):
            return self.region_op(results, op, rest)
        text, rtypes = rest, []
        if rest.startswith(": "):
            rest = " " + rest
        if " : " in rest and op not in ("store",):
            text, _, t = rest.rpartition(" : ")
            rtypes = split_top(t)
        if op == "yield" and " : " in rest:
            text = rest.rpartition(" : ")[0]
        return Inst(results, op, attrs, text.strip(), regions, rtypes)

    def region_op(self, results, op, rest):
        regions = []
        # head: operands, then optionally (args) {
        head = rest
        while True:
            m = re.match(r"(.*?)\s*(?:\(([^)]*)\)\s*)?\{$", head)
            if not m:
                raise SystemExit("bad region head: " + head)
            operands, args = m.group(1), m.group(2)
            body = self.block()
            regions.append((parse_region_args(args) if args else [], body, operands))
            close = self.lines[self.pos].strip()
            self.pos += 1
            tail = close[1:].strip()
            if tail.startswith("else") or tail.startswith("do"):
                head = tail.split(" ", 1)[1]
                continue
            rtypes = split_top(tail[1:].strip()) if tail.startswith(":") else []
            inst = Inst(results, op, {}, regions[0][2], [(a, b) for a, b, _ in regions], rtypes)
            return inst


def parse_kernel(text, name):
    lines = text.splitlines()
    start = None
    for i, l in enumerate(lines):
        if l.startswith("kernel @%s(" % name):
            start = i
    if start is None:
        raise SystemExit("kernel %s not found" % name)
    for i in range(start, len(lines)):
        l = lines[i].strip()
        if l.startswith("body("):
            args = parse_region_args(l[len("body("):l.rindex(")")])
            p = Parser(lines)
            p.pos = i + 1
            return args, p.block()
    raise SystemExit("no body")


# ---- execution ---------------------------------------------------------------------


def dtype_of(tstr):
    m = TYPE_RE.fullmatch(tstr.strip())
    return m.group(2)


def const_value(text, dt):
    t = text.strip()
    if dt == "bool":
        return np.bool_(t == "true")
    if dt.startswith("f") or dt == "bf16":
        return DT[dt](float(t))
    return DT[dt](int(t)).astype(DT[dt]) if not t.startswith("-") else np.array(int(t)).astype(DT[dt])[()]


class Machine:
    def __init__(self, env, pid, nprog):
        self.env = env
        self.pid = pid
        self.nprog = nprog

    def val(self, name):
        return self.env[name.strip()]

    def access(self, text):
        m = re.match(r"(%[\w.]+)\[(.*?)\](.*)", text)
        ref = self.val(m.group(1))
        idx = tuple(int(self.val(x)) for x in split_top(m.group(2))) if m.group(2) else ()
        rest = [x for x in split_top(m.group(3).lstrip(","))] if m.group(3).strip() else []
        return ref, idx, rest

    def run(self, insts):
        for i in insts:
            r = self.step(i)
            if r is not None:
                return r
        return None

    def step(self, i):
        op = i.op
        env = self.env
        if op == "yield":
            return [self.val(x) for x in split_top(i.text)] if i.text else []
        if op == "const":
            env[i.results[0]] = const_value(i.text, dtype_of(i.rtypes[0]))
            return None
        if op in ("program_id", "num_programs"):
            axis = int(i.attrs["axis"])
            env[i.results[0]] = np.int32((self.pid if op == "program_id" else self.nprog)[axis])
            return None
        if op == "alloc":
            m = TYPE_RE.fullmatch(i.rtypes[0])
            shape = [int(d) for d in m.group(3).split(",")] if m.group(3) else []
            env[i.results[0]] = np.zeros(shape, DT[m.group(2)]) + (np.nan if m.group(2).startswith("f") else 0)
            return None
        if op == "load":
            ref, idx, _ = self.access(i.text)
            for d, x in enumerate(idx):
                assert 0 <= x < ref.shape[d], "load out of bounds: %s %s" % (idx, ref.shape)
            env[i.results[0]] = ref[idx]
            return None
        if op in ("store", "atomic"):
            ref, idx, rest = self.access(i.text)
            for d, x in enumerate(idx):
                assert 0 <= x < ref.shape[d], "%s out of bounds: %s %s" % (op, idx, ref.shape)
            v = self.val(rest[0])
            old = ref[idx].copy() if hasattr(ref[idx], "copy") else ref[idx]
            if op == "store":
                ref[idx] = v
                return None
            kind = i.attrs["kind"]
            new = {"add": lambda a, b: a + b, "max": max, "min": min, "and": lambda a, b: a & b,
                   "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b, "xchg": lambda a, b: b}
            if kind == "cas":  # operands: value, then the compare value
                cmp = self.val(rest[1])
                if old == cmp:
                    ref[idx] = v
            else:
                ref[idx] = new[kind](old, v)
            env[i.results[0]] = old
            return None
        if op == "for":
            lo, hi, step, *inits = [self.val(x) for x in split_top(i.text)]
            args, body = i.regions[0]
            carried = inits
            k = lo
            while k < hi:
                env[args[0]] = k
                for a, c in zip(args[1:], carried):
                    env[a] = c
                carried = self.run(body)
                k = type(k)(k + step)
            for r, c in zip(i.results, carried):
                env[r] = c
            return None
        if op == "if":
            c = self.val(i.text)
            out = self.run(i.regions[0][1] if c else i.regions[1][1])
            for r, v in zip(i.results, out):
                env[r] = v
            return None
        if op == "while":
            carried = [self.val(x) for x in split_top(i.text)] if i.text else []
            (cargs, cond), (bargs, body) = i.regions
            while True:
                for a, c in zip(cargs, carried):
                    env[a] = c
                if not self.run(cond)[0]:
                    break
                for a, c in zip(bargs, carried):
                    env[a] = c
                carried = self.run(body)
            for r, c in zip(i.results, carried):
                env[r] = c
            return None
        args = [self.val(x) for x in split_top(i.text)]
        dt = DT[dtype_of(i.rtypes[0])]
        env[i.results[0]] = scalar_op(op, args, dt)
        return None


def scalar_op(op, a, dt):
    with np.errstate(all="ignore"):
        isf = np.issubdtype(dt, np.floating)
        if op == "cast":
            x = a[0]
            if dt == np.bool_:
                return np.bool_(x != 0)
            if not isf and isinstance(x, (np.floating, float)):
                return np.array(np.trunc(x)).astype(dt)[()]
            return np.array(x).astype(dt)[()]
        if op == "add":
            return dt(a[0] + a[1]) if dt != np.bool_ else np.bool_(a[0] or a[1])
        if op == "sub":
            return dt(a[0] - a[1])
        if op == "mul":
            return dt(a[0] * a[1]) if dt != np.bool_ else np.bool_(a[0] and a[1])
        if op == "div":
            return dt(a[0] / a[1])
        if op == "floordiv":
            if isf:
                return dt(np.floor_divide(a[0], a[1]))
            return dt(0) if a[1] == 0 else dt(int(a[0]) // int(a[1]))
        if op == "mod":
            if isf:
                return dt(np.mod(a[0], a[1]))
            return dt(0) if a[1] == 0 else dt(int(a[0]) % int(a[1]))
        if op == "pow":
            return dt(a[0] ** a[1])
        if op == "min":
            return dt(np.minimum(a[0], a[1]))
        if op == "max":
            return dt(np.maximum(a[0], a[1]))
        if op in ("and", "or", "xor"):
            f = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op]
            return dt(f(a[0], a[1]))
        if op == "shl":
            return dt(int(a[0]) << int(a[1]))
        if op == "shr":
            return dt(int(a[0]) >> int(a[1]))
        cmp = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
               "gt": np.greater, "ge": np.greater_equal}
        if op in cmp:
            return np.bool_(cmp[op](a[0], a[1]))
        if op == "select":
            return a[1] if a[0] else a[2]
        if op == "neg":
            return dt(-a[0])
        if op == "not":
            return np.bool_(not a[0]) if dt == np.bool_ else dt(~a[0])
        if op == "abs":
            return dt(abs(a[0]))
        math1 = {"exp": np.exp, "exp2": np.exp2, "log": np.log, "log1p": np.log1p, "sqrt": np.sqrt,
                 "rsqrt": lambda x: 1 / np.sqrt(x), "tanh": np.tanh, "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
                 "erf": lambda x: math.erf(x), "sin": np.sin, "cos": np.cos, "floor": np.floor, "ceil": np.ceil}
        if op in math1:
            return dt(math1[op](a[0]))
    raise SystemExit("unsupported op " + op)


def make_arg(spec, rng):
    kind, dt, *rest = spec.split(":")
    shape = [int(d) for d in rest[0].split(",")] if rest and rest[0] else []
    if kind == "val":
        return const_value(rest[0], dt)
    if kind == "rand":
        x = rng.standard_normal(shape) * 4
        if dt.startswith("i") or dt.startswith("u"):
            x = np.floor(x)
        return x.astype(DT[dt])
    if kind == "iota":
        return np.arange(int(np.prod(shape))).reshape(shape).astype(DT[dt])
    if kind == "zeros":
        return np.zeros(shape, DT[dt])
    raise SystemExit("bad arg spec " + spec)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ir")
    ap.add_argument("kernel")
    ap.add_argument("--grid", default="")
    ap.add_argument("--arg", action="append", default=[])
    ap.add_argument("--out", default="")
    ap.add_argument("--expect", action="append", default=[])
    ap.add_argument("--tol", type=float, default=1e-5)
    o = ap.parse_args()
    text = open(o.ir).read() if o.ir != "-" else sys.stdin.read()
    args, body = parse_kernel(text, o.kernel)
    rng = np.random.default_rng(1)
    env0 = {}
    inputs = {}
    for a in o.arg:
        name, spec = a.split("=", 1)
        v = make_arg(spec, rng)
        env0["%" + name] = v
        inputs[name] = v.copy() if isinstance(v, np.ndarray) else v
    for a in args:
        if a not in env0:
            raise SystemExit("argument %s not bound" % a)
    grid = [int(g) for g in o.grid.split(",")] if o.grid else []
    pids = [()]
    for g in grid:
        pids = [p + (k,) for p in pids for k in range(g)]
    for pid in pids:
        env = dict(env0)
        Machine(env, pid, tuple(grid)).run(body)
    ok = True
    outs = [x for x in o.out.split(",") if x]
    for j, name in enumerate(outs):
        got = env0["%" + name]
        print(name, "=", np.array2string(np.asarray(got).ravel(), threshold=64, precision=4))
        if j < len(o.expect):
            ns = dict(inputs)
            ns["np"] = np
            want = eval(o.expect[j], ns)
            if not np.allclose(np.asarray(got, np.float64), np.asarray(want, np.float64), rtol=o.tol, atol=o.tol,
                               equal_nan=True):
                print("MISMATCH in", name, file=sys.stderr)
                print(" want", np.array2string(np.asarray(want).ravel(), threshold=64, precision=4), file=sys.stderr)
                ok = False
    print("OK" if ok else "FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

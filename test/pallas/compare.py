#!/usr/bin/env python3
"""compare.py SAMPLE DUMPDIR [DUMPDIR...] - checks pkc against Pallas.

Each DUMPDIR is what `build/samples/SAMPLE --dump DUMPDIR` wrote: one
<param>.npy per array parameter (inputs as given, outputs as pkc produced
them; an inout parameter's contents before the run in in/<param>.npy), and
sizes.json = {"sizes": {...}, "scalars": {...}, "consts": {...}, "bf16": [...]}
(bf16 arrays are stored as '<u2' bit patterns and listed under "bf16").

For every dump this runs samples/pallas/SAMPLE.py's run(inputs, sizes) -- the
Pallas kernel that samples/SAMPLE.pk mirrors, in interpret mode on the CPU --
on the same inputs, and compares every output with pkc's:

  f32, f64     ||pkc - pallas||_2 / ||pallas||_2 < 1e-5
  f16, bf16    the same, < 1e-2
  ints, bool   every element equal
  NaN or inf in either output never passes.

Pallas runs with the consts of SAMPLE.pk (`const NAME = <literal>;`, or the
dump's "consts" where given: what the sample was compiled with by -D),
passed to run() as overrides, so both sides use the same block sizes; a
parameter whose dtype is a dtype const (`DT`) takes that const's dtype.
With --kernel K the dumps ran kernel K of SAMPLE.pk, and the mirror's
run_K() stands for run().  When the kernel has a 64-bit array or scalar,
jax_enable_x64 is turned on (JAX would otherwise truncate it to 32 bits).

It also checks that the comparison means something: the dump holds every
array parameter of the kernel with the declared dtype, inputs are finite and
not constant, every output is not constant (more than one element), and each
input array is actually used by the Pallas kernel: re-running Pallas with that
input perturbed must change some output (done for the first DUMPDIR; see
--sensitivity).

Prints one line per output and, when everything passed, `FIDELITY OK SAMPLE`
as the last line (exit 0); otherwise `FIDELITY FAILED SAMPLE: ...` (exit 1).
A bad command line or unreadable dump exits 2.
"""
import argparse
import importlib.util
import json
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in samples/pallas or here

# Pallas interpret mode on the CPU, whatever the machine has.
os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

TOL = {"f32": 1e-5, "f64": 1e-5, "f16": 1e-2, "bf16": 1e-2}
INT_DTYPES = {"bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"}


class Failure(Exception):
    pass


class BadDump(Exception):
    pass


def np_dtype(pk):
    if pk == "bf16":
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype({"bool": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32,
                     "i64": np.int64, "u8": np.uint8, "u16": np.uint16, "u32": np.uint32,
                     "u64": np.uint64, "f16": np.float16, "f32": np.float32,
                     "f64": np.float64}[pk])


# ---- the kernel's signature, from samples/SAMPLE.pk -------------------------

def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    # `//` is a comment only after a non-operand (lang-spec §2.2); the samples
    # use it that way only at the end of lines, after `;`, `{`, `}`, `)`...
    # Removing `// ...` only where it follows whitespace at a line start or
    # one of ;{} keeps any floor division in dims intact.
    return re.sub(r"(^|[;{}])\s*//[^\n]*", r"\1", text, flags=re.M)


def parse_signature(pk_path, kernel):
    """[(name, mode, dtype, dims)] for the kernel's parameters, in order;
    mode is 'in'/'out'/'inout'/'prefetch' for arrays (a prefetch array is an
    input, lang-spec §5.11), 'scalar' for scalars (dims None)."""
    text = strip_comments(open(pk_path, encoding="utf-8").read())
    m = re.search(r"\bkernel\s+" + re.escape(kernel) + r"\s*\(", text)
    if not m:
        raise BadDump("%s: no kernel %s" % (pk_path, kernel))
    depth, i = 1, m.end()
    while depth:
        if i >= len(text):
            raise BadDump("%s: unbalanced parameter list" % pk_path)
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
    plist = text[m.end():i - 1]
    params, depth, cur = [], 0, ""
    for ch in plist + ",":
        if ch == "," and depth == 0:
            if cur.strip():
                params.append(cur.strip())
            cur = ""
            continue
        depth += {"[": 1, "(": 1, "]": -1, ")": -1}.get(ch, 0)
        cur += ch
    sig = []
    for p in params:
        a = re.fullmatch(r"(\w+)\s*:\s*(in|out|inout|prefetch)\s+(\w+)\s*\[(.*)\]", p, flags=re.S)
        s = re.fullmatch(r"(\w+)\s*:\s*(\w+)", p)
        if a:
            dims = [d.strip() for d in a.group(4).split(",")] if a.group(4).strip() else []  # f32[]: rank 0
            sig.append((a.group(1), a.group(2), a.group(3), dims))
        elif s:
            sig.append((s.group(1), "scalar", s.group(2), None))
        else:
            raise BadDump("%s: cannot read parameter %r" % (pk_path, p))
    return sig


DTYPE_NAMES = {"bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32", "f64"}


def const_value(text):
    """A const's value from its .pk text: an integer, true/false, a float, or
    a dtype name (a dtype const, lang-spec §4.3); None for anything else."""
    text = text.strip()
    if re.fullmatch(r"[0-9][0-9_]*|0[xX][0-9a-fA-F_]+", text):
        return int(text.replace("_", ""), 0)
    if text in ("true", "false"):
        return text == "true"
    if text in DTYPE_NAMES:
        return text
    try:
        return float(text)
    except ValueError:
        return None


def parse_consts(pk_path):
    """{NAME: value} for the file's `const NAME = <literal>;` (integer, bool,
    float or dtype name).  They are passed to run() (which takes const
    overrides in `sizes`) so the Pallas mirror runs with the consts pkc
    compiled, not its own copies; consts given by an expression
    (`cdiv(M, 2)`) the mirror derives itself."""
    text = strip_comments(open(pk_path, encoding="utf-8").read())
    out = {}
    for m in re.finditer(r"\bconst\s+(\w+)\s*=\s*([\w.]+)\s*;", text):
        v = const_value(m.group(2))
        if v is not None:
            out[m.group(1)] = v
    return out


# ---- loading a dump -----------------------------------------------------------

def load_array(path, pk_dtype, is_bf16):
    if not os.path.exists(path):
        raise BadDump("missing %s" % path)
    a = np.load(path, allow_pickle=False)
    if pk_dtype == "bf16":
        if not is_bf16 or a.dtype != np.dtype("<u2"):
            raise BadDump("%s: a bf16 parameter must be dumped as '<u2' bit patterns "
                          "listed under \"bf16\" in sizes.json (got %s)" % (path, a.dtype))
        return a.view(np_dtype("bf16"))
    if a.dtype != np_dtype(pk_dtype):
        raise BadDump("%s: dtype %s, but the kernel declares %s" % (path, a.dtype, pk_dtype))
    return a


def load_dump(dump, sig, pk_consts):
    try:
        with open(os.path.join(dump, "sizes.json"), encoding="utf-8") as f:
            meta = json.load(f)
    except (OSError, ValueError) as e:
        raise BadDump("cannot read %s/sizes.json: %s" % (dump, e))
    sizes = {k: int(v) for k, v in meta.get("sizes", {}).items()}
    consts = dict(pk_consts)  # what pkc compiled, unless the dump says otherwise (-D)
    for k, v in meta.get("consts", {}).items():
        consts[k] = const_value(str(v)) if isinstance(v, str) else v
    # a parameter's dtype may be a dtype const (`q: in DT[n]`)
    sig = [(n, mode, consts.get(dt, dt) if dt not in DTYPE_NAMES else dt, dims)
           for n, mode, dt, dims in sig]
    scalars = meta.get("scalars", {})
    bf16 = set(meta.get("bf16", []))
    inputs, pkc_out = {}, {}
    for name, mode, dt, dims in sig:
        if mode == "scalar":
            if name not in scalars:
                raise BadDump("%s/sizes.json: no value for scalar parameter %s" % (dump, name))
            inputs[name] = np.asarray(scalars[name]).astype(np_dtype(dt))[()]
            continue
        if mode in ("in", "prefetch"):
            inputs[name] = load_array(os.path.join(dump, name + ".npy"), dt, name in bf16)
        elif mode == "out":
            pkc_out[name] = load_array(os.path.join(dump, name + ".npy"), dt, name in bf16)
        else:  # inout: its contents before the run are the input
            inputs[name] = load_array(os.path.join(dump, "in", name + ".npy"), dt, name in bf16)
            pkc_out[name] = load_array(os.path.join(dump, name + ".npy"), dt, name in bf16)
        for k, d in enumerate(dims):
            arr = inputs.get(name, pkc_out.get(name))
            if arr.ndim != len(dims):
                raise BadDump("%s.npy: rank %d, the kernel declares %s[%s]"
                              % (name, arr.ndim, dt, ", ".join(dims)))
            want = sizes.get(d, consts.get(d))
            if want is None and re.fullmatch(r"\d+", d):
                want = int(d)
            if want is not None and arr.shape[k] != want:
                raise BadDump("%s.npy: shape %s, but dim %d is %s = %d"
                              % (name, arr.shape, k, d, want))
    return sizes, consts, inputs, pkc_out, sig


# ---- running Pallas -------------------------------------------------------------

def load_module(path):
    spec = importlib.util.spec_from_file_location(
        "pallas_" + os.path.splitext(os.path.basename(path))[0], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run_pallas(mod, inputs, run_sizes):
    # Copies: run() must not be able to change the inputs we compare against.
    out = getattr(mod, "run_kernel", mod.run)({k: np.array(v, copy=True) for k, v in inputs.items()}, dict(run_sizes))
    return {k: np.asarray(v) for k, v in out.items()}


def perturbed(a, rng):
    """a changed in (nearly) every element, same shape and dtype."""
    if a.dtype == np.bool_:
        return ~a
    if np.issubdtype(a.dtype, np.integer):
        return (a + rng.integers(1, 4, a.shape)).astype(a.dtype)
    f = a.astype(np.float64)
    scale = float(np.std(f)) if f.size > 1 and np.std(f) > 0 else 1.0
    return (f + scale * rng.standard_normal(f.shape)).astype(a.dtype)


# ---- comparing ----------------------------------------------------------------

def describe(a):
    return "%s%s" % (a.dtype, list(a.shape))


def compare_output(name, dt, got, want, lines):
    """got: pkc's output, want: Pallas'.  Appends a report line; returns a
    failure message or None."""
    if got.shape != want.shape:
        lines.append("  %s: shape %s (pkc) vs %s (pallas) FAILED" % (name, got.shape, want.shape))
        return "%s: shapes differ" % name
    if want.dtype != got.dtype:
        lines.append("  %s: dtype %s (pkc) vs %s (pallas) FAILED" % (name, got.dtype, want.dtype))
        return "%s: dtypes differ" % name
    if dt in INT_DTYPES:
        bad = np.flatnonzero(got.reshape(-1) != want.reshape(-1))
        if bad.size:
            idx = [np.unravel_index(i, got.shape) for i in bad[:5]]
            ex = ", ".join("%s: pkc %s pallas %s" % (tuple(int(j) for j in ix), got[ix], want[ix])
                           for ix in idx)
            lines.append("  %s: %s %d of %d elements differ FAILED (%s)"
                         % (name, dt, bad.size, got.size, ex))
            return "%s: %d elements differ" % (name, bad.size)
        lines.append("  %s: %s%s exact OK" % (name, dt, list(got.shape)))
        return None
    a = got.astype(np.float64)
    b = want.astype(np.float64)
    for who, arr in (("pkc", a), ("pallas", b)):
        nonfinite = np.flatnonzero(~np.isfinite(arr.reshape(-1)))
        if nonfinite.size:
            ix = np.unravel_index(nonfinite[0], arr.shape)
            lines.append("  %s: %d non-finite elements in the %s output, the first at %s = %s FAILED"
                         % (name, nonfinite.size, who, tuple(int(j) for j in ix), arr[ix]))
            return "%s: %s output not finite" % (name, who)
    diff = a - b
    nb = float(np.linalg.norm(b))
    nd = float(np.linalg.norm(diff))
    rel = nd / nb if nb > 0 else nd
    tol = TOL[dt]
    worst = np.unravel_index(int(np.argmax(np.abs(diff))), diff.shape) if diff.size else ()
    max_abs = float(np.abs(diff).max()) if diff.size else 0.0
    ok = rel < tol
    line = "  %s: %s%s rel_err=%.3g (tol %g) max_abs=%.3g" % (name, dt, list(got.shape), rel, tol, max_abs)
    if not ok and diff.size:
        line += " at %s: pkc %r pallas %r" % (tuple(int(j) for j in worst), float(a[worst]), float(b[worst]))
    lines.append(line + (" OK" if ok else " FAILED"))
    return None if ok else "%s: rel_err %.3g >= %g" % (name, rel, tol)


def not_constant(name, arr, who):
    if arr.size < 2:
        return None
    flat = arr.reshape(-1)
    if np.all(flat == flat[0]):
        return "%s: every element of the %s is %s (the comparison would mean nothing)" % (
            name, who, flat[0])
    return None


def check_dump(mod, sig, pk_consts, dump, sensitivity, lines):
    sizes, consts, inputs, pkc_out, sig = load_dump(dump, sig, pk_consts)
    run_sizes = dict(consts)
    run_sizes.update(sizes)
    dtypes = {name: dt for name, _, dt, _ in sig}
    arrays_in = [name for name, mode, _, _ in sig if mode in ("in", "inout", "prefetch")]
    lines.append("%s: %s" % (dump, " ".join("%s=%s" % kv for kv in sorted(run_sizes.items()))))
    failures = []

    for name in arrays_in:
        a = inputs[name]
        if a.dtype.kind == "f" or dtypes[name] == "bf16":
            if not np.all(np.isfinite(a.astype(np.float64))):
                failures.append("%s: the dumped input is not finite" % name)
        msg = not_constant(name, a, "input")
        if msg:
            failures.append(msg)

    try:
        pallas = run_pallas(mod, inputs, run_sizes)
    except Exception as e:  # the mirror refused these inputs or sizes
        raise Failure("Pallas run failed: %s: %s" % (type(e).__name__, e))
    want_outs = [name for name, mode, _, _ in sig if mode in ("out", "inout")]
    if sorted(pallas) != sorted(want_outs):
        raise Failure("the Pallas mirror returned %s, the kernel's outputs are %s"
                      % (sorted(pallas), sorted(want_outs)))
    for name in want_outs:
        msg = compare_output(name, dtypes[name], pkc_out[name], pallas[name], lines)
        if msg:
            failures.append(msg)
        msg = not_constant(name, pallas[name], "Pallas output")
        if msg:
            failures.append(msg)

    if sensitivity and not failures:
        rng = np.random.default_rng(12345)
        used = []
        for name in arrays_in:
            if inputs[name].size == 0:
                continue
            changed = dict(inputs)
            changed[name] = perturbed(inputs[name], rng)
            other = run_pallas(mod, changed, run_sizes)
            moved = any(not np.array_equal(other[o], pallas[o], equal_nan=True) for o in want_outs)
            if moved:
                used.append(name)
            else:
                failures.append("%s: changing this input does not change any Pallas output "
                                "(the Pallas kernel does not read it)" % name)
        if used:
            lines.append("  inputs used by the Pallas run: %s" % ", ".join(used))
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sample")
    ap.add_argument("dumps", nargs="+", metavar="DUMPDIR")
    ap.add_argument("--kernel", help="the kernel of SAMPLE.pk the dumps ran (default: SAMPLE); "
                    "the mirror's run_<KERNEL>() then runs it")
    ap.add_argument("--samples", default=os.path.join(ROOT, "samples"),
                    help="the samples directory (SAMPLE.pk and pallas/SAMPLE.py)")
    ap.add_argument("--sensitivity", choices=["first", "all", "none"], default="first",
                    help="re-run Pallas with each input perturbed for the first dump "
                         "(default), every dump, or none")
    ap.add_argument("--no-sensitivity", dest="sensitivity", action="store_const", const="none",
                    help="the same as --sensitivity=none")
    args = ap.parse_args()

    pk = os.path.join(args.samples, args.sample + ".pk")
    py = os.path.join(args.samples, "pallas", args.sample + ".py")
    try:
        sig = parse_signature(pk, args.kernel or args.sample)
        pk_consts = parse_consts(pk)
    except (OSError, BadDump) as e:
        print("compare.py: %s" % e, file=sys.stderr)
        return 2
    if any(dt in ("i64", "u64", "f64") for _, _, dt, _ in sig):
        import jax
        jax.config.update("jax_enable_x64", True)
    mod = load_module(py)
    if args.kernel and args.kernel != args.sample:
        if not hasattr(mod, "run_" + args.kernel):
            print("compare.py: %s has no run_%s()" % (py, args.kernel), file=sys.stderr)
            return 2
        mod.run_kernel = getattr(mod, "run_" + args.kernel)

    failures = []
    for k, dump in enumerate(args.dumps):
        lines = []
        sensitivity = args.sensitivity == "all" or (args.sensitivity == "first" and k == 0)
        try:
            fails = check_dump(mod, sig, pk_consts, dump, sensitivity, lines)
        except BadDump as e:
            if lines:
                print("\n".join(lines))
            print("compare.py: %s: %s" % (dump, e), file=sys.stderr)
            print("FIDELITY FAILED %s: bad dump %s" % (args.sample, dump))
            return 2
        except Failure as e:
            fails = [str(e)]
        print("\n".join(lines))
        for f in fails:
            print("  error: %s" % f)
        failures += ["%s: %s" % (dump, f) for f in fails]
        sys.stdout.flush()
    if failures:
        print("FIDELITY FAILED %s: %s" % (args.sample, "; ".join(failures)))
        return 1
    print("FIDELITY OK %s" % args.sample)
    return 0


if __name__ == "__main__":
    sys.exit(main())

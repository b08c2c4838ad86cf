"""Validates pkc's Mosaic TPU kernels (--target=mosaic-tpu) with JAX.

    validate.py --pkc PKC [--root REPO] [SAMPLE ...]
    validate.py --pkc PKC --pk FILE.pk [-D NAME=VALUE ...]   (checks 1-4 only)

For each TPU-expressible sample (the table SAMPLES: the -D sizes that make
it expressible; all of them by default) this compiles samples/<name>.pk
with --emit=mlir and --emit=tpu-custom-call and checks, with JAX 0.11.2
(jaxlib carries the TPU dialect; run it with build/pyenv/bin/python):

 1. the module parses in a jaxlib MLIR context with the TPU dialect
    registered, and verifies;
 2. its structure agrees: one kernel function whose arguments are one i32
    per grid axis, then one memref per window (VMEM, the window_bounds
    shape; a scalar parameter is a rank-0 SMEM memref), then the scratch
    buffers (VMEM); iteration_bounds and dimension_semantics have one entry
    per grid axis; every window's transform_indices names a function taking
    the grid indices and returning one i32 per window dimension;
 3. the custom-call JSON agrees: operands and results match the windows,
    and its body (base64 bytecode after mosaic-serde) deserialises to the
    same module as the text, and to the same as JAX's own serialisation of
    it;
 4. tpu_custom_call.as_tpu_kernel wraps the module and a jitted call of it
    lowers for TPU (an abstract TPU v5e device: no TPU needed) to a
    stablehlo.custom_call @tpu_custom_call;
 5. the Pallas mirror samples/pallas/<name>.py, lowered for TPU the same
    way with the same sizes, gives a kernel with the same signature, the
    same function attributes and the same transform functions.  Known,
    intended differences are allowed and reported as notes: pkc passes a
    scalar parameter as a rank-0 SMEM operand where the mirror bakes it into
    the kernel, and pkc's default axis semantics is parallel (lang-spec
    §5.4) where Pallas' is arbitrary.

Prints one line per check and "<name>: OK" per sample; the last line is
"validate: N passed, M failed".  Exit status 1 if anything failed.
"""
import argparse
import base64
import difflib
import importlib.util
import json
import os
import re
import subprocess
import sys
import traceback

import numpy as np

import jax
import jax.numpy as jnp
from jax._src import tpu_custom_call
from jax._src.interpreters import mlir as jmlir
from jax._src.lib import tpu
from jax._src.lib.mlir import ir, passmanager
from jax.experimental import pallas as pl

# sample -> the sizes (-D NAME=VALUE) under which it is TPU-expressible.
# They are given to pkc and, as `sizes`, to the Pallas mirror's run().
SAMPLES = {
    "add_vectors": {"n": 4096},
    "matmul": {},
    "matmul_kgrid": {"m": 256, "k": 512, "n": 256, "BM": 128, "BN": 128, "BK": 128},
    "matmul_relu": {"m": 128, "n": 256, "BN": 128},
    "matmul_tiled": {"m": 64, "n": 256, "BN": 128, "BK": 128},
    "rmsnorm": {"rows": 16},
    "bmm": {"batch": 2, "m": 64, "n": 32},
    "causal_softmax": {"b": 2},
    "gmm": {"nb": 7, "m": 224, "g": 4},
}

DTYPES = {"bool": jnp.bool_, "i8": jnp.int8, "i16": jnp.int16, "i32": jnp.int32, "u8": jnp.uint8,
          "u16": jnp.uint16, "u32": jnp.uint32, "f16": jnp.float16, "bf16": jnp.bfloat16,
          "f32": jnp.float32}


class Failure(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)


def tpu_mesh():
    return jax.sharding.AbstractMesh(
        (), (), abstract_device=jax.sharding.AbstractDevice(device_kind="TPU v5e", num_cores=1, platform="tpu"))


def make_context():
    ctx = jmlir.make_ir_context()
    tpu.register_dialect(ctx)
    return ctx


# ---- reading modules ----------------------------------------------------------

def funcs(module):
    return {ir.StringAttr(op.attributes["sym_name"]).value: op
            for op in module.body.operations if op.operation.name == "func.func"}


def kernel_func(module):
    ks = [op for op in funcs(module).values() if "tpu.core_type" in op.attributes]
    check(len(ks) == 1, "exactly one kernel function (with tpu.core_type), found %d" % len(ks))
    return ks[0]


def func_type(op):
    return ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)


def window_params(kfunc):
    if "window_params" not in kfunc.attributes:
        return []
    return [ir.DictAttr(a) for a in ir.ArrayAttr(kfunc.attributes["window_params"])]


def dense_i64(attr):
    return list(ir.DenseI64ArrayAttr(attr))


def transform_name(wp):
    return ir.FlatSymbolRefAttr(wp["transform_indices"]).value


def deserialize(ctx, body):
    """A custom-call body (bytecode after mosaic-serde) as a module."""
    ctx.allow_unregistered_dialects = True
    try:
        module = ir.Module.parse(body)
        passmanager.PassManager.parse("builtin.module(mosaic-serde{serialize=false})").run(module.operation)
    finally:
        ctx.allow_unregistered_dialects = False
    check(module.operation.verify(), "the deserialised custom-call body verifies")
    return module


def canonical(module):
    """The module's text without the serde version attribute."""
    text = str(module)
    return re.sub(r" attributes \{stable_mosaic\.version = \d+ : i64\}", "", text)


# ---- pkc ----------------------------------------------------------------------

def run_pkc(pkc, path, defines, emit):
    cmd = [pkc, "--target=mosaic-tpu", "--emit=" + emit, path, "-o", "-"]
    for k, v in defines.items():
        cmd += ["-D", "%s=%s" % (k, v)]
    p = subprocess.run(cmd, capture_output=True)
    check(p.returncode == 0, "pkc %s failed: %s" % (" ".join(cmd), p.stderr.decode()))
    return p.stdout


# ---- the checks ----------------------------------------------------------------

def check_structure(module, log):
    """2: grid arguments, windows, memrefs and transform functions agree."""
    fs = funcs(module)
    k = kernel_func(module)
    ft = func_type(k)
    check(len(ft.results) == 0, "the kernel returns nothing")
    sem = list(ir.ArrayAttr(k.attributes["dimension_semantics"]))
    ngrid = len(sem)
    for s in sem:
        check(str(s) in ("#tpu.dimension_semantics<parallel>", "#tpu.dimension_semantics<arbitrary>"),
              "dimension semantics %s" % s)
    check(str(k.attributes["tpu.core_type"]) == "#tpu.core_type<tc>", "tpu.core_type is tc")
    nprefetch = ir.IntegerAttr(k.attributes["scalar_prefetch"]).value
    nscratch = ir.IntegerAttr(k.attributes["scratch_operands"]).value
    inputs = list(ft.inputs)
    for g in range(ngrid):
        check(str(inputs[g]) == "i32", "argument %d (grid index) is i32, not %s" % (g, inputs[g]))
    # Scalar prefetch (lang-spec §5.11): whole i32 arrays in SMEM after the grid indices.
    prefetch = [str(t) for t in inputs[ngrid:ngrid + nprefetch]]
    for p in prefetch:
        check(re.fullmatch(r"memref<[0-9x]*i32, #tpu.memory_space<smem>>", p), "prefetch argument %s" % p)
    wps = window_params(k)
    if ngrid:
        bounds = dense_i64(k.attributes["iteration_bounds"])
        check(len(bounds) == ngrid and all(b >= 1 for b in bounds), "iteration_bounds %s" % bounds)
    else:
        check("iteration_bounds" not in k.attributes, "no iteration_bounds without a grid")
    nwin = len(inputs) - ngrid - nprefetch - nscratch
    check(not ngrid or len(wps) == nwin, "window_params has %d entries for %d windows" % (len(wps), nwin))
    for w, wp in enumerate(wps):
        mt = ir.MemRefType(inputs[ngrid + nprefetch + w])
        bounds = dense_i64(wp["window_bounds"])
        check(list(mt.shape) == bounds, "window %d: memref %s vs window_bounds %s" % (w, mt, bounds))
        space = str(mt.memory_space)
        check(space == ("#tpu.memory_space<smem>" if mt.rank == 0 else "#tpu.memory_space<vmem>"),
              "window %d in %s" % (w, space))
        tname = transform_name(wp)
        check(tname in fs, "window %d: transform @%s exists" % (w, tname))
        tt = func_type(fs[tname])
        check([str(t) for t in tt.inputs] == ["i32"] * ngrid + prefetch,
              "@%s takes the %d grid indices and the %d prefetch arrays" % (tname, ngrid, nprefetch))
        check([str(t) for t in tt.results] == ["i32"] * mt.rank, "@%s returns %d block indices" % (tname, mt.rank))
    for s in range(nscratch):
        mt = ir.MemRefType(inputs[len(inputs) - nscratch + s])
        check(str(mt.memory_space) == "#tpu.memory_space<vmem>", "scratch %d in VMEM" % s)
    log("  structure: %d grid axes, %s%d windows, %d scratch"
        % (ngrid, "%d prefetch arrays, " % nprefetch if nprefetch else "", nwin, nscratch))
    return k, ngrid, wps


def check_custom_call(ctx, module, cc, log):
    """3: the JSON's operands, results and body."""
    k = kernel_func(module)
    ft = func_type(k)
    ngrid = len(ir.ArrayAttr(k.attributes["dimension_semantics"]))
    nscratch = ir.IntegerAttr(k.attributes["scratch_operands"]).value
    # the prefetch arrays (whole, in SMEM) then the windows
    windows = [ir.MemRefType(t) for t in list(ft.inputs)[ngrid:len(ft.inputs) - nscratch]]
    arrays = cc["operands"] + cc["results"]
    check(len(arrays) == len(windows), "%d operands + results for %d windows" % (len(arrays), len(windows)))
    for a, mt in zip(arrays, windows):
        check(len(a["shape"]) == mt.rank, "array %s vs window %s" % (a, mt))
        check(str(mt.element_type) == a["dtype"].replace("u", "i"), "array %s vs window %s" % (a, mt))
        check(all(w <= d for w, d in zip(mt.shape, a["shape"])), "array %s vs window %s" % (a, mt))
    config = cc["custom_call_config"]
    check(config.get("serialization_format") == 1 and config.get("needs_layout_passes") is True,
          "serialization_format 1, needs_layout_passes")
    check(cc["kernel_name"] == ir.StringAttr(k.attributes["sym_name"]).value, "kernel_name")
    ours = deserialize(ctx, base64.b64decode(config["body"]))
    check(canonical(ours) == canonical(module), "the body deserialises to the text module")
    asm, _ = tpu_custom_call._lower_mosaic_module_to_asm(module, ir_version=15)
    theirs = deserialize(ctx, asm)
    check(canonical(theirs) == canonical(ours), "the body matches JAX's serialisation of the module")
    log("  custom call: %d operands, %d results, body of %d bytes = JAX's serialisation"
        % (len(cc["operands"]), len(cc["results"]), len(config["body"]) * 3 // 4))


def check_lowering(module, cc, log):
    """4: as_tpu_kernel and a jitted call lowered for TPU."""
    outs = tuple(jax.ShapeDtypeStruct(tuple(r["shape"]), DTYPES[r["dtype"]]) for r in cc["results"])
    ins = [jax.ShapeDtypeStruct(tuple(o["shape"]), DTYPES[o["dtype"]]) for o in cc["operands"]]
    f = tpu_custom_call.as_tpu_kernel(module, outs if len(outs) != 1 else outs[0], kernel_name=cc["kernel_name"])
    with jax.sharding.use_abstract_mesh(tpu_mesh()):
        lowered = jax.jit(f).trace(*ins).lower(lowering_platforms=("tpu",))
    text = lowered.as_text()
    check("stablehlo.custom_call @tpu_custom_call" in text, "the lowering has a tpu_custom_call")
    log("  lowered for TPU v5e: jit(as_tpu_kernel(module)) -> stablehlo.custom_call @tpu_custom_call")


def pallas_module(ctx, root, name, sizes):
    """The Mosaic kernel module of the Pallas mirror, lowered for TPU."""
    spec = importlib.util.spec_from_file_location("mirror_" + name, os.path.join(root, "samples", "pallas", name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    captured = []
    orig = pl.pallas_call

    def lowering_pallas_call(kernel, **kw):
        kw["interpret"] = False
        call = orig(kernel, **kw)

        def lower(*args):
            avals = [jax.ShapeDtypeStruct(np.shape(a), a.dtype) for a in args]
            with jax.sharding.use_abstract_mesh(tpu_mesh()):
                captured.append(jax.jit(call).trace(*avals).lower(lowering_platforms=("tpu",)).as_text())
            return jax.tree.map(lambda s: np.zeros(s.shape, s.dtype), kw["out_shape"])
        return lower

    pl.pallas_call = lowering_pallas_call
    try:
        mod.run(mod.make_inputs(sizes, np.random.default_rng(0)), sizes)
    finally:
        pl.pallas_call = orig
    check(len(captured) == 1, "the mirror makes one pallas_call")
    m = re.search(r'backend_config = "(.*?)", kernel_name', captured[0])
    config = json.loads(m.group(1).replace("\\22", '"'))
    return deserialize(ctx, base64.b64decode(config["custom_call_config"]["body"]))


def transform_text(module, name):
    text = str(funcs(module)[name])
    return re.sub(r"@transform_\d+", "@transform", text)


def compare_with_pallas(ctx, root, name, sizes, module, log):
    """5: signature, attributes and transforms against the Pallas mirror."""
    ref = pallas_module(ctx, root, name, sizes)
    our_k, ref_k = kernel_func(module), kernel_func(ref)
    ngrid = len(ir.ArrayAttr(our_k.attributes["dimension_semantics"]))
    our_in, ref_in = [str(t) for t in func_type(our_k).inputs], [str(t) for t in func_type(ref_k).inputs]
    our_wp, ref_wp = window_params(our_k), window_params(ref_k)
    # pkc's scalar parameters are rank-0 SMEM windows; the mirror bakes them in.
    npf = ir.IntegerAttr(our_k.attributes["scalar_prefetch"]).value
    keep = [i for i, t in enumerate(our_in)
            if not (i >= ngrid + npf and re.fullmatch(r"memref<[a-z]+[0-9]*, #tpu.memory_space<smem>>", t))]
    dropped = [our_in[i] for i in range(len(our_in)) if i not in keep]
    if dropped:
        log("  note: pkc passes %d scalar parameter(s) as SMEM operands (%s); the mirror bakes them in"
            % (len(dropped), ", ".join(dropped)))
    our_in_kept = [our_in[i] for i in keep]
    check(our_in_kept == ref_in, "signature: pkc %s vs Pallas %s" % (our_in_kept, ref_in))
    our_wp = [our_wp[i - ngrid - npf] for i in keep if i >= ngrid + npf and i - ngrid - npf < len(our_wp)]
    check(len(our_wp) == len(ref_wp), "window_params count")
    for w, (a, b) in enumerate(zip(our_wp, ref_wp)):
        for key in ("window_bounds", "pipeline_mode"):
            va = str(a[key]) if key in a else None
            vb = str(b[key]) if key in b else None
            check(va == vb, "window %d %s: pkc %s vs Pallas %s" % (w, key, va, vb))
        ta, tb = transform_text(module, transform_name(a)), transform_text(ref, transform_name(b))
        check(ta == tb, "window %d transform:\n%s\nvs Pallas\n%s" % (w, ta, tb))
    for key in ("iteration_bounds", "scalar_prefetch", "scratch_operands", "tpu.core_type"):
        va = str(our_k.attributes[key]) if key in our_k.attributes else None
        vb = str(ref_k.attributes[key]) if key in ref_k.attributes else None
        check(va == vb, "%s: pkc %s vs Pallas %s" % (key, va, vb))
    ours_sem = [str(s) for s in ir.ArrayAttr(our_k.attributes["dimension_semantics"])]
    ref_sem = [str(s) for s in ir.ArrayAttr(ref_k.attributes["dimension_semantics"])]
    src = open(os.path.join(root, "samples", name + ".pk")).read()
    if re.search(r"^\s*semantics\s*\(", src, re.M):
        check(ours_sem == ref_sem, "dimension_semantics: pkc %s vs Pallas %s" % (ours_sem, ref_sem))
    else:
        check(all(s.endswith("<parallel>") for s in ours_sem) and all(s.endswith("<arbitrary>") for s in ref_sem),
              "default dimension_semantics: pkc %s vs Pallas %s" % (ours_sem, ref_sem))
        if ours_sem:
            log("  note: no semantics clause: pkc's default is parallel (lang-spec §5.4), Pallas' arbitrary")
    log("  Pallas mirror: same signature, attributes and %d transform functions" % len(ref_wp))
    # The bodies are not required to match; say how close they are.
    a, b = body_ops(our_k), body_ops(ref_k)
    if a == b:
        log("  body: the same %d operations as Pallas, in the same order" % len(a))
    else:
        sm = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
        extra = [a[i] for tag, i1, i2, _, _ in sm.get_opcodes() if tag in ("delete", "replace") for i in range(i1, i2)]
        missing = [b[j] for tag, _, _, j1, j2 in sm.get_opcodes() if tag in ("insert", "replace") for j in range(j1, j2)]
        log("  note: body: %d operations, Pallas %d; pkc has %s more, Pallas %s more"
            % (len(a), len(b), ", ".join(extra) or "none", ", ".join(missing) or "none"))


def body_ops(func):
    """The names of the operations in a function's body, in order (nested too)."""
    names = []

    def walk(op):
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    names.append(inner.operation.name)
                    walk(inner.operation)
    walk(func.operation)
    return names


def kernel_modules(module):
    """The kernel modules: the module itself, or its nested modules (one
    per kernel of a multi-kernel file)."""
    nested = [op for op in module.body.operations if op.operation.name == "builtin.module"]
    if not nested:
        return [module]
    out = []
    for op in nested:
        # Re-parse each on its own, as the custom call has it.
        text = str(op.operation)
        text = re.sub(r"^module @\w+", "module", text)
        out.append(ir.Module.parse(text))
    return out


def validate_file(pkc, path, defines, log, mirror=None):
    """Checks 1-4 for every kernel of one .pk file (and 5 with a mirror)."""
    ctx = make_context()
    with ctx, ir.Location.unknown():
        text = run_pkc(pkc, path, defines, "mlir").decode()
        module = ir.Module.parse(text)
        check(module.operation.verify(), "the module verifies")
        log("  parsed and verified with the TPU dialect")
        kms = kernel_modules(module)
        ccs = [json.loads(line) for line in run_pkc(pkc, path, defines, "tpu-custom-call").splitlines()]
        check(len(ccs) == len(kms), "one custom call per kernel")
        for km, cc in zip(kms, ccs):
            if len(kms) > 1:
                log(" kernel %s:" % cc["kernel_name"])
            check_structure(km, log)
            check_custom_call(ctx, km, cc, log)
            check_lowering(km, cc, log)
        if mirror:
            root, name = mirror
            compare_with_pallas(ctx, root, name, defines, module, log)


def validate(pkc, root, name, log):
    validate_file(pkc, os.path.join(root, "samples", name + ".pk"), SAMPLES[name], log, (root, name))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pkc", required=True)
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    ap.add_argument("--pk", help="validate this .pk file (checks 1-4) instead of samples")
    ap.add_argument("-D", action="append", default=[], metavar="NAME=VALUE", help="with --pk: a -D for pkc")
    ap.add_argument("samples", nargs="*")
    args = ap.parse_args()
    if args.pk:
        jobs = [(os.path.basename(args.pk),
                 lambda log: validate_file(args.pkc, args.pk, dict(d.split("=", 1) for d in args.D), log))]
    else:
        jobs = [(n, lambda log, n=n: validate(args.pkc, args.root, n, log)) for n in (args.samples or SAMPLES)]
    passed = failed = 0
    for name, job in jobs:
        print("%s:" % name)
        try:
            job(print)
            print("%s: OK" % name)
            passed += 1
        except Failure as e:
            print("%s: FAILED: %s" % (name, e))
            failed += 1
        except Exception:
            print("%s: FAILED with an exception:" % name)
            traceback.print_exc(file=sys.stdout)
            failed += 1
        sys.stdout.flush()
    print("validate: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

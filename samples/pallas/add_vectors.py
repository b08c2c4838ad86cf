"""add_vectors: the Pallas kernel that samples/add_vectors.pk mirrors.

The quickstart's hello world (add_vectors_kernel), carved into BLOCK-sized
blocks by BlockSpecs over a 1-D grid; n need not be a multiple of BLOCK.

Interface shared by every script in this folder:
  run(inputs, sizes) -> outputs
    inputs:  every `in`/`inout` array and every scalar parameter of the .pk
             kernel, by parameter name (NumPy arrays / NumPy scalars);
    sizes:   every size symbol of the kernel (ints), optionally also
             overrides of its consts (as pkc -D NAME=VALUE would give);
    returns: every `out`/`inout` array, by parameter name (NumPy arrays).
  make_inputs(sizes, rng), reference(inputs, sizes): random inputs and the
  NumPy reference; TEST_SIZES: the sizes `python3 <script>` checks.
"""
import numpy as np
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

BLOCK = 1024
TEST_SIZES = [{"n": 4096}, {"n": 5000}, {"n": 1}]


def add_vectors_kernel(x_ref, y_ref, o_ref):
    o_ref[...] = x_ref[...] + y_ref[...]


def run(inputs, sizes):
    n = sizes["n"]
    block = sizes.get("BLOCK", BLOCK)
    spec = pl.BlockSpec((block,), lambda i: (i,))
    o = pl.pallas_call(
        add_vectors_kernel,
        out_shape=jax.ShapeDtypeStruct((n,), jnp.float32),
        grid=(pl.cdiv(n, block),),
        in_specs=[spec, spec],
        out_specs=spec,
        interpret=True,
    )(jnp.asarray(inputs["x"]), jnp.asarray(inputs["y"]))
    return {"o": np.asarray(o)}


def make_inputs(sizes, rng):
    n = sizes["n"]
    return {"x": rng.standard_normal(n).astype(np.float32),
            "y": rng.standard_normal(n).astype(np.float32)}


def reference(inputs, sizes):
    return {"o": inputs["x"] + inputs["y"]}


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    for sizes in TEST_SIZES:
        inputs = make_inputs(sizes, rng)
        out, ref = run(inputs, sizes), reference(inputs, sizes)
        for name in ref:
            np.testing.assert_allclose(out[name], ref[name], rtol=1e-6, atol=1e-6)
    print("add_vectors: OK")

"""add_one: the Pallas kernel that samples/add_one.pk mirrors.

"Your first Pallas kernel": no BlockSpecs, each program picks its own
BLOCK-sized slice of the whole arrays with pl.program_id.  The doc indexes
with an offsets array; for a length that BLOCK does not divide, the last
program's slice runs past the end, so this version masks its load and store
(pallas.triton load/store with mask=, other=).
Interface (run / make_inputs / reference / TEST_SIZES): see add_vectors.py.
"""
import functools

import numpy as np
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plgpu

BLOCK = 8
TEST_SIZES = [{"n": 32}, {"n": 29}, {"n": 3}]


def add_one_kernel(x_ref, o_ref, *, n: int, block_size: int):
    i = pl.program_id(0)
    offsets = i * block_size + jnp.arange(block_size)
    in_bounds = offsets < n
    v = plgpu.load(x_ref.at[pl.ds(i * block_size, block_size)], mask=in_bounds, other=0)
    plgpu.store(o_ref.at[pl.ds(i * block_size, block_size)], v + 1, mask=in_bounds)


def run(inputs, sizes):
    n = sizes["n"]
    block = sizes.get("BLOCK", BLOCK)
    o = pl.pallas_call(
        functools.partial(add_one_kernel, n=n, block_size=block),
        out_shape=jax.ShapeDtypeStruct((n,), jnp.int32),
        grid=(pl.cdiv(n, block),),
        interpret=True,
    )(jnp.asarray(inputs["x"]))
    return {"o": np.asarray(o)}


def make_inputs(sizes, rng):
    return {"x": rng.integers(-1000, 1000, sizes["n"]).astype(np.int32)}


def reference(inputs, sizes):
    return {"o": inputs["x"] + np.int32(1)}


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    for sizes in TEST_SIZES:
        inputs = make_inputs(sizes, rng)
        out, ref = run(inputs, sizes), reference(inputs, sizes)
        for name in ref:
            np.testing.assert_array_equal(out[name], ref[name])
    print("add_one: OK")

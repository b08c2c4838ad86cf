"""histogram: the Pallas kernel that samples/histogram.pk mirrors.

Triton-style: each program loads a masked pl.ds slice of x, clamps the
values to [0, NBINS) and adds its counts into h, which aliases its initial
contents (input_output_aliases).  The .pk kernel scatters +1 per lane with an
atomic add through a gather index; Pallas' interpreter does not combine equal
indices within one vector atomic (nor take a mask there), so this version
first reduces the block to per-bin counts (one-hot sum) and atomically adds
that vector: the same result.
Interface (run / make_inputs / reference / TEST_SIZES): see add_vectors.py.
"""
import functools

import numpy as np
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plgpu

BLOCK, NBINS = 256, 64
TEST_SIZES = [{"n": 1024}, {"n": 1000}, {"n": 5}]


def histogram_kernel(x_ref, h_in_ref, h_ref, *, n: int, block: int):
    del h_in_ref  # aliased to h_ref
    nbins = h_ref.shape[0]
    i = pl.program_id(0)
    in_bounds = i * block + jnp.arange(block) < n
    v = plgpu.load(x_ref.at[pl.ds(i * block, block)], mask=in_bounds, other=0)
    b = jnp.minimum(jnp.maximum(v, 0), nbins - 1)
    onehot = (b[:, None] == jnp.arange(nbins)[None, :]) & in_bounds[:, None]
    counts = jnp.sum(onehot.astype(jnp.int32), axis=0)
    plgpu.atomic_add(h_ref, pl.ds(0, nbins), counts)


def run(inputs, sizes):
    n = sizes["n"]
    block, nbins = sizes.get("BLOCK", BLOCK), sizes.get("NBINS", NBINS)
    h = pl.pallas_call(
        functools.partial(histogram_kernel, n=n, block=block),
        out_shape=jax.ShapeDtypeStruct((nbins,), jnp.int32),
        grid=(pl.cdiv(n, block),),
        input_output_aliases={1: 0},
        interpret=True,
    )(jnp.asarray(inputs["x"]), jnp.asarray(inputs["h"]))
    return {"h": np.asarray(h)}


def make_inputs(sizes, rng):
    nbins = sizes.get("NBINS", NBINS)
    return {"x": rng.integers(-5, nbins + 5, sizes["n"]).astype(np.int32),
            "h": rng.integers(0, 10, nbins).astype(np.int32)}


def reference(inputs, sizes):
    nbins = sizes.get("NBINS", NBINS)
    counts = np.bincount(np.clip(inputs["x"], 0, nbins - 1), minlength=nbins)
    return {"h": (inputs["h"] + counts).astype(np.int32)}


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    for sizes in TEST_SIZES:
        inputs = make_inputs(sizes, rng)
        out, ref = run(inputs, sizes), reference(inputs, sizes)
        for name in ref:
            np.testing.assert_array_equal(out[name], ref[name])
    print("histogram: OK")

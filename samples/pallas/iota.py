"""iota: the Pallas kernel that samples/iota.pk mirrors.

The quickstart's iota_kernel: grid=(n,), program i stores i into o[i].
Interface (run / make_inputs / reference / TEST_SIZES): see add_vectors.py.
"""
import numpy as np
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

TEST_SIZES = [{"n": 8}, {"n": 100}]


def iota_kernel(o_ref):
    i = pl.program_id(0)
    o_ref[i] = i


def run(inputs, sizes):
    n = sizes["n"]
    o = pl.pallas_call(
        iota_kernel,
        out_shape=jax.ShapeDtypeStruct((n,), jnp.int32),
        grid=(n,),
        interpret=True,
    )()
    return {"o": np.asarray(o)}


def make_inputs(sizes, rng):
    return {}


def reference(inputs, sizes):
    return {"o": np.arange(sizes["n"], dtype=np.int32)}


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    for sizes in TEST_SIZES:
        inputs = make_inputs(sizes, rng)
        out, ref = run(inputs, sizes), reference(inputs, sizes)
        for name in ref:
            np.testing.assert_array_equal(out[name], ref[name])
    print("iota: OK")

"""first_reach: the Pallas kernel that samples/first_reach.pk mirrors.

Per row of counts, the first index where the running total reaches thr (C
when it never does), and its chunk and lane (lax.div, lax.rem); one program
per row, scanning the row in chunks of CH.  Pallas cannot break out of a
loop, so where the .pk kernel uses `continue` and `break`, this one carries a
`done` flag through lax.while_loop and skips zero chunks with jnp.where.
Interface (run / make_inputs / reference / TEST_SIZES): see add_vectors.py.
"""
import functools

import numpy as np
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

C = 256
CH = 32
TEST_SIZES = [{"rows": 5, "thr": 700}, {"rows": 9, "thr": 100}]


def first_reach_kernel(x_ref, cut_ref, chunk_ref, lane_ref, *, thr, c_len, ch):
    def cond(carry):
        c, _, _, done = carry
        return (c < c_len // ch) & jnp.logical_not(done)

    def body(carry):
        c, total, k, _ = carry
        v = x_ref[pl.ds(c * ch, ch)]
        nonzero = jnp.any(v != 0)
        run = jnp.cumsum(v) + total
        hit = nonzero & jnp.any(run >= thr)
        first = (c * ch + jnp.argmax((run >= thr).astype(jnp.int32))).astype(jnp.int32)
        k = jnp.where(hit, first, k)
        total = jnp.where(nonzero & jnp.logical_not(hit), total + jnp.sum(v), total)
        return c + 1, total, k, hit

    init = (jnp.int32(0), jnp.int32(0), jnp.int32(c_len), jnp.bool_(False))
    _, _, k, _ = jax.lax.while_loop(cond, body, init)
    cut_ref[...] = k
    chunk_ref[...] = jax.lax.div(k, jnp.int32(ch))
    lane_ref[...] = jax.lax.rem(k, jnp.int32(ch))


def run(inputs, sizes):
    rows, c_len, ch = sizes["rows"], sizes.get("C", C), sizes.get("CH", CH)
    kernel = functools.partial(first_reach_kernel, thr=int(inputs["thr"]), c_len=c_len, ch=ch)
    row = pl.BlockSpec((None,), lambda i: (i,))
    outs = pl.pallas_call(
        kernel,
        out_shape=tuple(jax.ShapeDtypeStruct((rows,), jnp.int32) for _ in range(3)),
        grid=(rows,),
        in_specs=[pl.BlockSpec((None, c_len), lambda i: (i, 0))],
        out_specs=(row, row, row),
        interpret=True,
    )(jnp.asarray(inputs["x"]))
    return {name: np.asarray(a) for name, a in zip(("cut", "chunk", "lane"), outs)}


def make_inputs(sizes, rng):
    c_len, ch = sizes.get("C", C), sizes.get("CH", CH)
    x = rng.integers(0, 10, (sizes["rows"], c_len)).astype(np.int32)
    zero = rng.integers(0, 3, (sizes["rows"], c_len // ch)) == 0
    x[np.repeat(zero, ch, axis=1)] = 0
    return {"x": x, "thr": np.int32(sizes.get("thr", 700))}


def reference(inputs, sizes):
    x, thr = inputs["x"], int(inputs["thr"])
    ch = sizes.get("CH", CH)
    run = np.cumsum(x, axis=1)
    reached = run >= thr
    cut = np.where(reached.any(axis=1), reached.argmax(axis=1), x.shape[1]).astype(np.int32)
    return {"cut": cut, "chunk": cut // ch, "lane": cut % ch}


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    for sizes in TEST_SIZES:
        inputs = make_inputs(sizes, rng)
        out, ref = run(inputs, sizes), reference(inputs, sizes)
        for name in ref:
            np.testing.assert_array_equal(out[name], ref[name])
    print("first_reach: OK")

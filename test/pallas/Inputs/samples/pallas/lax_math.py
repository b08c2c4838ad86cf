"""lax_math: the Pallas mirror of lax_math.pk (test/pallas/lax_math.test): jnp.tan, arctan, arctan2,
arcsin, arccos, sinh, cosh, arcsinh, arccosh, arctanh, expm1, cbrt, round, rint, trunc, lax.erf_inv,
lax.population_count, lax.clz, lax.shift_right_logical, lax.bitcast_convert_type, lax.select_n, in
Pallas interpret mode."""
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

F = ((8, 16), jnp.float32)
OUTS = {"t": F, "at": F, "as": F, "hy": F, "ex": F, "rd": F, "ei": F, "oh": ((8, 16), jnp.float16),
        "pc": ((8, 16), jnp.int32), "bc": ((8, 16), jnp.int32), "bf": F, "sn": F}


def lax_math_kernel(x_ref, y_ref, h_ref, i_ref, k_ref, t_ref, at_ref, as_ref, hy_ref, ex_ref, rd_ref,
                    ei_ref, oh_ref, pc_ref, bc_ref, bf_ref, sn_ref):
    v = x_ref[...]
    w = i_ref[...]
    h = h_ref[...]
    t_ref[...] = jnp.tan(v)
    at_ref[...] = jnp.arctan(v) + jnp.arctan2(v, y_ref[...])
    as_ref[...] = jnp.arcsin(v * 0.9) + jnp.arccos(v * 0.9)
    hy_ref[...] = (jnp.sinh(v) + jnp.cosh(v) + jnp.arcsinh(v) + jnp.arccosh(jnp.abs(v) + 1.0)
                   + jnp.arctanh(v * 0.9))
    ex_ref[...] = jnp.expm1(v) + jnp.cbrt(v)
    rd_ref[...] = jnp.round(v * 4.0) + jnp.rint(v * 4.0) + jnp.trunc(v * 4.0)
    ei_ref[...] = lax.erf_inv(v * 0.9)
    oh_ref[...] = jnp.sinh(h) + jnp.round(h * 4.0) + lax.erf_inv(h * 0.5)
    pc_ref[...] = lax.population_count(w) + lax.clz(w) + lax.shift_right_logical(w, 3)
    bc_ref[...] = lax.bitcast_convert_type(v, jnp.int32)
    bf_ref[...] = lax.bitcast_convert_type(w & 0x3f7fffff, jnp.float32)
    sn_ref[...] = lax.select_n(k_ref[...], v, y_ref[...], v * y_ref[...])


def run(inputs, sizes):
    outs = pl.pallas_call(lax_math_kernel, out_shape=[jax.ShapeDtypeStruct(*o) for o in OUTS.values()],
                          interpret=True)(*(jnp.asarray(inputs[p]) for p in ("x", "y", "h", "i", "k")))
    return {name: jax.device_get(o) for name, o in zip(OUTS, outs)}

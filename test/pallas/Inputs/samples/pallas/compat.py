"""compat: the Pallas mirror of compat.pk (test/pallas/compat.test): jnp.sign, jnp.clip,
jnp.square, jnp.reciprocal, jnp.isnan, jnp.isfinite, jnp.swapaxes, jnp.roll and pltpu.roll,
lax.broadcast_in_dim, pl.multiple_of, precision= on jnp.dot and jnp.einsum, steps on value slices, jnp.split unpacked (RoPE's halves) and a
helper returning a tuple, x.at[...].set() and the other functional updates of a value, in Pallas
interpret mode."""
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

OUTS = {"s": ((8, 16), jnp.float32), "c": ((8, 16), jnp.float32), "q": ((8, 16), jnp.float32),
        "f": ((8, 16), jnp.int32), "t": ((16, 8), jnp.float32), "r": ((8, 16), jnp.float32),
        "b": ((8, 16), jnp.float32), "m": ((4, 16), jnp.float32),
        "d": ((8, 8), jnp.float32), "h": ((8, 8), jnp.float32),
        "u": ((8, 16), jnp.float32),
        "w": ((8, 16), jnp.float32)}


def rotate(a, b, c, s):
    return a * c - b * s, b * c + a * s


def compat_kernel(x_ref, y_ref, v_ref, s_ref, c_ref, q_ref, f_ref, t_ref, r_ref, b_ref, m_ref, d_ref, h_ref, u_ref, w_ref):
    xv = x_ref[...]
    s_ref[...] = jnp.sign(jnp.where(jnp.abs(xv) < 0.1, 0.0, xv))
    c_ref[...] = jnp.clip(xv, -0.5, 0.5) + jnp.clip(xv, None, 0.25)
    q_ref[...] = jnp.square(xv) + jnp.reciprocal(y_ref[...])
    z = xv / jnp.where(jnp.abs(y_ref[...]) < 0.2, 0.0, xv)
    f_ref[...] = jnp.isnan(z).astype(jnp.int32) * 2 + jnp.isfinite(z).astype(jnp.int32)
    t_ref[...] = jnp.swapaxes(xv, 0, 1)
    r_ref[...] = pltpu.roll(xv, 3, 1) + jnp.roll(xv, -2, axis=0)
    b_ref[...] = lax.broadcast_in_dim(v_ref[...], (8, 16), (1,))
    def body(k, carry):
        i = pl.multiple_of(k * 4, 4)
        m_ref[...] = x_ref[pl.ds(i, 4), :]
        return carry
    lax.fori_loop(1, 2, body, 0)
    d_ref[...] = (jnp.dot(xv, y_ref[...].T, precision=lax.Precision.HIGHEST)
                  + jnp.einsum("mk,nk->mn", xv, y_ref[...], precision=(lax.Precision.HIGH, lax.Precision.HIGH))
                  + jnp.dot(xv, y_ref[...].T, precision=None))
    h_ref[...] = xv[:, ::2] * xv[:, 1::2] + xv[::-1, 15:0:-2] - xv[::1, ::2][7::-3, :][1]
    x1, x2 = jnp.split(xv, 2, axis=-1)
    ys, yc, yr = jnp.split(y_ref[...], [4, 12], axis=1)
    r1, r2 = rotate(x1, x2, jnp.concatenate([yc[:, :4], yr], axis=1), yc)
    u_ref[...] = jnp.concatenate([r1, r2 + ys[:, 0:1]], axis=-1)
    lo = jnp.zeros_like(xv)
    lo = lo.at[:, 0].set(xv[:, 0])
    lo = lo.at[:, 1].set(y_ref[...][:, 0])
    lo = lo.at[:, 2:].set(xv[:, 1:-1])
    back = (xv[0, 0] > 100.0).astype(jnp.int32) - 3
    wv = lo.at[3].add(1.0).at[2:5, 4:9].multiply(y_ref[...][2:5, 4:9])
    wv = jnp.where(xv > 0.5, 0.0, wv)  # pkc's .at[mask].set(0): JAX takes a bool index on concrete arrays only
    w_ref[...] = (wv.at[-1, ...].max(0.25).at[0, 0].divide(2.0).at[back].min(-0.5) + lo.at[1].get()
                  + jnp.roll(xv, back * 5, 1) - jnp.roll(xv, shift=back, axis=0))


def run(inputs, sizes):
    outs = pl.pallas_call(compat_kernel, out_shape=[jax.ShapeDtypeStruct(*o) for o in OUTS.values()],
                          interpret=True)(*(jnp.asarray(inputs[p]) for p in ("x", "y", "v")))
    return {name: jax.device_get(o) for name, o in zip(OUTS, outs)}

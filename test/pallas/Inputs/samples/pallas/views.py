"""views: the Pallas mirror of views.pk (test/pallas/views.test): x_ref.at[a].at[b]
and x_ref.at[a][b] (TransformedRef) read and written in Pallas interpret mode."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def views_kernel(x_ref, o_ref, p_ref, q_ref, r_ref, t_ref):
    o_ref[...] = x_ref.at[1].at[:, 3][...]
    p_ref[...] = x_ref.at[1:3, 2:6][:, 1, 0:4]
    q_ref[...] = x_ref.at[3].at[2:6][...]
    q_ref.at[0:2][1, 0:4] = x_ref[0, 0, 0:4]
    r_ref[...] = x_ref.at[:, :, 4:12].at[1:3][:, 2, 1:5]
    for i in range(2):
        ti = t_ref.at[i]
        xi = x_ref.at[i + 1].at[2:4]
        ti[...] = xi[1, :]


def run(inputs, sizes):
    shapes = {"o": (8,), "p": (2, 4), "q": (4, 16), "r": (2, 4), "t": (2, 16)}
    outs = pl.pallas_call(views_kernel, out_shape=[jax.ShapeDtypeStruct(s, jnp.float32) for s in shapes.values()],
                          interpret=True)(jnp.asarray(inputs["x"]))
    return {name: jax.device_get(v) for name, v in zip(shapes, outs)}

"""nn_fns: the Pallas mirror of nn_fns.pk (test/pallas/nn_fns.test): jnp.nextafter, copysign,
signbit, logaddexp and jax.nn's relu, relu6, softplus, log_sigmoid, silu, swish, gelu (approximate
and exact), leaky_relu, elu, hard_tanh, in Pallas interpret mode."""
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

F = ((8, 16), jnp.float32)
OUTS = {"na": ((8, 16), jnp.int32), "cs": F, "la": F, "sp": F, "rl": F, "sw": F, "ge": F, "lr": F,
        "gh": ((8, 16), jnp.float16)}


def nn_fns_kernel(x_ref, y_ref, s_ref, k_ref, h_ref, na_ref, cs_ref, la_ref, sp_ref, rl_ref, sw_ref, ge_ref,
                  lr_ref, gh_ref):
    v = x_ref[...]
    w = y_ref[...]
    h = h_ref[...]
    k = k_ref[...]
    sv = jnp.where(k == 1, jnp.inf, jnp.where(k == 2, -jnp.inf, jnp.where(k == 3, jnp.nan, s_ref[...])))
    r = jnp.nextafter(sv, w)
    na_ref[...] = lax.bitcast_convert_type(jnp.where(jnp.isnan(r), 0.0, r), jnp.int32)
    cs_ref[...] = jnp.copysign(v, w) + jnp.where(jnp.signbit(w), 1.0, 0.0)
    la_ref[...] = jnp.logaddexp(v, w)
    sp_ref[...] = jax.nn.softplus(v) + jax.nn.log_sigmoid(v)
    rl_ref[...] = jax.nn.relu(v) + jax.nn.relu6(v * 2.0) + jax.nn.hard_tanh(v)
    sw_ref[...] = jax.nn.silu(v) + jax.nn.swish(w)
    ge_ref[...] = jax.nn.gelu(v) + jax.nn.gelu(w, approximate=False)
    lr_ref[...] = (jax.nn.leaky_relu(v) + jax.nn.leaky_relu(w, negative_slope=0.2) + jax.nn.elu(v)
                   + jax.nn.elu(w, alpha=0.5))
    gh_ref[...] = jax.nn.gelu(h) + jax.nn.silu(h) + jax.nn.softplus(h)


def run(inputs, sizes):
    outs = pl.pallas_call(nn_fns_kernel, out_shape=[jax.ShapeDtypeStruct(*o) for o in OUTS.values()],
                          interpret=True)(*(jnp.asarray(inputs[p]) for p in ("x", "y", "s", "k", "h")))
    return {name: jax.device_get(o) for name, o in zip(OUTS, outs)}

"""JAX programs for the StableHLO importer tests: (name, function, example inputs).

Each is exported with `jax.jit(f).lower(*args)`, imported, run through the
WebNN core, and compared with JAX's own result for the same inputs."""
from __future__ import annotations

import numpy as np


def cases():
    import jax
    import jax.numpy as jnp
    from jax import lax

    rng = np.random.default_rng(7)

    def f32(*shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    def i32(lo, hi, *shape):
        return rng.integers(lo, hi, shape).astype(np.int32)

    x = f32(3, 4)
    y = f32(3, 4)
    pos = np.abs(f32(3, 4)) + 0.1
    out = [
        # elementwise
        ("add", lambda a, b: a + b, (x, y)),
        ("subtract", lambda a, b: a - b, (x, y)),
        ("multiply", lambda a, b: a * b, (x, y)),
        ("divide", lambda a, b: a / b, (x, pos)),
        ("maximum_minimum", lambda a, b: (jnp.maximum(a, b), jnp.minimum(a, b)), (x, y)),
        ("power", lambda a, b: a ** b, (pos, y)),
        ("remainder_f32", lambda a, b: lax.rem(a * 5, b), (x, pos)),
        ("remainder_i32", lambda a, b: lax.rem(a, b), (i32(-20, 20, 3, 4), i32(1, 6, 3, 4) * np.int32(-1) ** i32(0, 2, 3, 4))),
        ("divide_i32", lambda a, b: lax.div(a, b), (i32(-20, 20, 3, 4), i32(1, 6, 3, 4))),
        ("unary_math", lambda a: (jnp.abs(a), jnp.exp(a), jnp.log(jnp.abs(a) + 1), jnp.sqrt(jnp.abs(a)),
                                  lax.rsqrt(jnp.abs(a) + 1), jnp.tanh(a), jnp.cos(a), jnp.sin(a), -a,
                                  jnp.floor(a), jnp.ceil(a), jnp.sign(a)), (x,)),
        ("logistic", jax.nn.sigmoid, (x,)),
        ("erf_erfc", lambda a: (lax.erf(a), lax.erfc(a)), (x,)),
        ("log1p_expm1", lambda a: (jnp.log1p(jnp.abs(a)), jnp.expm1(a)), (x,)),
        ("round", lambda a: (jnp.round(a * 2), lax.round(a * 2, lax.RoundingMethod.AWAY_FROM_ZERO)),
         (np.array([[0.5, 1.5, -0.5, -2.5], [0.2, 2.6, -1.25, 3.75]], np.float32),)),
        ("is_finite", jnp.isfinite, (np.array([1.0, np.inf, -np.inf, np.nan, 0.0], np.float32),)),
        ("square", jnp.square, (x,)),
        ("clamp", lambda a: (jnp.clip(a, -0.5, 0.5), lax.clamp(np.float32(-0.2), a, np.float32(0.3))), (x,)),
        ("clamp_runtime", lambda lo, a, hi: lax.clamp(lo, a, hi), (f32(3, 4) - 1, x, f32(3, 4) + 1)),
        # comparison and logic
        ("compare", lambda a, b: (a == b, a != b, a > b, a >= b, a < b, a <= b), (x, np.where(x > 0, x, y))),
        ("logic", lambda a, b: (jnp.logical_and(a > 0, b > 0), jnp.logical_or(a > 0, b > 0),
                                jnp.logical_xor(a > 0, b > 0), jnp.logical_not(a > 0)), (x, y)),
        ("select", lambda p, a, b: jnp.where(p > 0, a, b), (x, x, y)),
        # conversions
        ("convert", lambda a: (a.astype(jnp.int32), (a > 0).astype(jnp.float32), a.astype(jnp.bool_),
                               (a * 10).astype(jnp.int32).astype(jnp.float32)), (x,)),
        # data movement
        ("broadcast_in_dim", lambda a, v: (a + v, v[:, None] * jnp.ones((4, 3)), jnp.broadcast_to(a[1], (2, 3, 4))),
         (x, f32(4))),
        ("reshape_transpose", lambda a: (a.reshape(2, 6), a.T, a.reshape(2, 2, 3).transpose(2, 0, 1)), (x,)),
        ("slice", lambda a: (a[1:3, ::2], a[:, 1], a[::-1, 1:]), (x,)),
        ("concatenate", lambda a, b: (jnp.concatenate([a, b], 0), jnp.concatenate([a, b, a], 1)), (x, y)),
        ("pad", lambda a: (jnp.pad(a, ((1, 2), (0, 1))), lax.pad(a, np.float32(7), ((1, -1, 1), (-2, 1, 2))),
                           jnp.pad(a, 1, constant_values=3.5)), (x,)),
        ("pad_runtime_value", lambda a, v: lax.pad(a, v, ((1, 0, 1), (0, 2, 0))), (x, np.float32(-4.0))),
        ("reverse", lambda a: (jnp.flip(a, 0), jnp.flip(a)), (x,)),
        ("iota", lambda a: a + jnp.arange(4, dtype=jnp.float32), (x,)),
        ("dynamic_slice", lambda a, i: (lax.dynamic_slice(a, (i, np.int32(1)), (2, 2)),
                                        lax.dynamic_slice(a, (i + 5, i - 9), (2, 3))), (x, np.int32(1))),
        ("dynamic_update_slice", lambda a, u, i: (lax.dynamic_update_slice(a, u, (i, np.int32(1))),
                                                  lax.dynamic_update_slice(a, u, (i + 7, i - 3))),
         (x, f32(2, 2), np.int32(1))),
        # reductions
        ("reduce", lambda a: (a.sum(0), a.max(1), a.min(), jnp.prod(a, 1), jnp.mean(a), jnp.all(a > -1, 1),
                              jnp.any(a > 1, 0)), (x,)),
        ("reduce_i32", lambda a: (a.sum(), a.max(0)), (i32(-5, 5, 3, 4),)),
        ("argmax_argmin", lambda a: (jnp.argmax(a, 1), jnp.argmin(a, 0)), (x,)),
        ("reduce_window_max", lambda a: lax.reduce_window(a, -jnp.inf, lax.max, (1, 1, 3, 3), (1, 1, 2, 2), "SAME"),
         (f32(1, 2, 7, 7),)),
        ("reduce_window_sum", lambda a: lax.reduce_window(a, 0.0, lax.add, (1, 1, 2, 2), (1, 1, 2, 2), "VALID"),
         (f32(1, 2, 6, 6),)),
        ("reduce_window_1d_min", lambda a: lax.reduce_window(a, jnp.inf, lax.min, (3,), (1,), ((1, 1),)), (f32(8),)),
        ("avg_pool_nhwc", lambda a: lax.reduce_window(a, 0.0, lax.add, (1, 3, 3, 1), (1, 2, 2, 1), "SAME") / 9.0,
         (f32(1, 7, 7, 3),)),
        # linear algebra
        ("dot", lambda a, b: (a @ b, jnp.dot(a[0], b[:, 0])), (x, f32(4, 5))),
        ("dot_general_batch", lambda a, b: jnp.einsum("bij,bjk->bik", a, b), (f32(2, 3, 4), f32(2, 4, 5))),
        ("dot_general_multi", lambda a, b: jnp.einsum("bhqd,bhkd->bhqk", a, b), (f32(1, 2, 3, 4), f32(1, 2, 5, 4))),
        ("dot_i32", lambda a, b: a @ b, (i32(-3, 3, 2, 3), i32(-3, 3, 3, 2))),
        ("conv_nchw_same", lambda a, k: lax.conv_general_dilated(a, k, (1, 1), "SAME",
                                                                  dimension_numbers=("NCHW", "OIHW", "NCHW")),
         (f32(1, 3, 8, 8), f32(4, 3, 3, 3))),
        ("conv_nhwc_strided_dilated", lambda a, k: lax.conv_general_dilated(
            a, k, (2, 1), ((1, 2), (0, 1)), rhs_dilation=(1, 2), dimension_numbers=("NHWC", "HWIO", "NHWC")),
         (f32(2, 9, 8, 3), f32(3, 2, 3, 5))),
        ("conv_grouped", lambda a, k: lax.conv_general_dilated(a, k, (1, 1), "VALID", feature_group_count=2,
                                                                dimension_numbers=("NCHW", "OIHW", "NCHW")),
         (f32(1, 4, 5, 5), f32(6, 2, 3, 3))),
        ("conv_transpose", lambda a, k: lax.conv_transpose(a, k, (2, 2), "SAME",
                                                           dimension_numbers=("NHWC", "HWIO", "NHWC")),
         (f32(1, 4, 4, 2), f32(3, 3, 2, 3))),
        ("conv_1d", lambda a, k: lax.conv_general_dilated(a, k, (1,), "SAME", dimension_numbers=("NWC", "WIO", "NWC")),
         (f32(2, 10, 3), f32(3, 3, 4))),
        # gathers
        ("embedding", lambda e, i: e[i], (f32(10, 4), np.array([[1, 2], [9, 0]], np.int32))),
        ("take_axis1", lambda a, i: jnp.take(a, i, axis=1), (x, np.array([3, 0, 1], np.int32))),
        ("gather_2d_index", lambda a, i, j: a[i, j], (x, np.array([0, 2, 1], np.int32), np.array([3, 1, 0], np.int32))),
        ("gather_clamped", lambda e, i: jnp.take(e, i, axis=0, mode="clip"), (f32(5, 3), np.array([-3, 7, 2], np.int32))),
        ("take_along_axis", lambda a, i: jnp.take_along_axis(a, i, axis=1), (x, np.array([[0, 3], [2, 2], [1, 0]], np.int32))),
        ("one_hot", lambda i: jax.nn.one_hot(i, 6), (np.array([0, 3, 5, 7], np.int32),)),
        # scatters: `.at[...]` updates; out-of-bounds rows are dropped, repeated rows accumulate (add)
        ("scatter_set", lambda a, i, u: (a.at[1].set(5.0), a.at[i].set(u), a.at[np.array([0, 7])].set(u)),
         (x, np.int32(2), f32(4))),
        ("scatter_add", lambda a, u: a.at[np.array([0, 2, 2, 9, -1])].add(u), (x, f32(5, 4))),
        ("scatter_add_i32", lambda a, i, u: a.at[i].add(u), (i32(-5, 5, 3, 4), np.array([1, 1, 5, 0], np.int32),
                                                           i32(-5, 5, 4, 4))),
        ("scatter_max_columns", lambda a, u: a.at[:, np.array([3, 0])].max(u), (x, f32(3, 2))),
        ("scatter_min_mul_repeated", lambda a, u: (a.at[np.array([1, 1, 0])].min(u), a.at[np.array([2, 2])].mul(u[:2])),
         (x, f32(3, 4))),
        ("scatter_2d_index", lambda a, u: a.at[np.array([0, 2]), np.array([1, 3])].set(u), (x, f32(2))),
        # JAX library functions built from several ops
        ("cumsum_cumprod", lambda a: (jnp.cumsum(a, axis=1), jnp.cumprod(a, axis=0)), (x,)),
        ("logsumexp_softplus", lambda a: (jax.nn.logsumexp(a, axis=1), jax.nn.softplus(a), jax.nn.silu(a)), (x,)),
        ("tile_repeat_triu", lambda a: (jnp.tile(a, (2, 1)), jnp.repeat(a, 2, axis=0), jnp.triu(a)), (x,)),
        ("image_resize_linear", lambda a: jax.image.resize(a, (6, 7), "linear"), (x,)),
        ("depthwise_conv", lambda a, k: lax.conv_general_dilated(a, k, (1, 1), "SAME", feature_group_count=3,
                                                                 dimension_numbers=("NHWC", "HWIO", "NHWC")),
         (f32(1, 6, 6, 3), f32(3, 3, 1, 3))),
        ("floor_divide_mod", lambda a, b, c, d: (a // b, c % d),
         (i32(-9, 9, 3, 4), i32(1, 4, 3, 4), x * 3, pos)),
        ("masked_max", lambda a: jnp.max(a, axis=1, where=a > 0, initial=-1.0), (x,)),
        # calls
        ("nested_calls", lambda a: jax.jit(lambda t: jax.nn.relu(jax.jit(jnp.tanh)(t)) * 2)(a), (x,)),
        ("scalars", lambda a, s: (a * s, s + 1, jnp.sum(a) * s), (x, np.float32(1.5))),
        # zero-size intermediates (WebNN has no empty tensors; the importer folds them away)
        ("pad_edge_zero_width", lambda a: (jnp.pad(a, ((0, 2), (1, 0)), mode="edge"),
                                           jnp.pad(a, ((1, 0), (0, 0)), mode="edge")), (f32(6, 4),)),
        ("pad_modes_zero_width", lambda a: (jnp.pad(a, ((0, 2), (1, 0)), mode="reflect"),
                                            jnp.pad(a, ((2, 0), (0, 1)), mode="wrap"),
                                            jnp.pad(a, ((0, 1), (0, 0)), mode="symmetric"),
                                            jnp.pad(a, ((0, 0), (2, 0)), mode="linear_ramp", end_values=1.0),
                                            jnp.pad(a, ((0, 2), (0, 0)), mode="mean")), (x,)),
        ("concatenate_empty_piece", lambda a, b: (jnp.concatenate([a, a[:0], b], 0),
                                                  jnp.concatenate([a[:, 4:], b[:, :0], a[:, 1:]], 1)), (x, y)),
        ("reduce_empty_axis", lambda a: (jnp.sum(a[:, :0], axis=1), jnp.max(a[:, :0], axis=1, initial=-2.0),
                                         jnp.prod(a[:, :0], 1), jnp.mean(a[:, :0], 1), jnp.any(a[:0] > 0, 0),
                                         jnp.sum(a[:, 4:]), *[p.sum() for p in jnp.split(a, [0, 2, 2], axis=1)]),
         (x,)),
        ("dot_general_zero_contraction", lambda a, b: (a[:, :0] @ b[:0, :],
                                                       jnp.einsum("bij,bjk->bik", a[None, :, :0], b[None, :0])),
         (x, y)),
        ("conv_zero_features", lambda a, k: lax.conv_general_dilated(a[:, :0], k[:, :0], (1, 1), "SAME",
                                                                      dimension_numbers=("NCHW", "OIHW", "NCHW")),
         (f32(1, 2, 4, 4), f32(3, 2, 3, 3))),
        ("pad_of_empty", lambda a, v: (lax.pad(a[:0], np.float32(3.0), ((1, 1, 0), (0, 0, 0))),
                                       lax.pad(a[:0], v, ((2, 0, 0), (0, 0, 0)))), (x, np.float32(-1.0))),
        ("elementwise_of_empty", lambda a, i: jnp.concatenate(
            [jnp.where(a[:0] > 0, jnp.exp(a[:0]) * 2, -a[:0]).astype(jnp.int32).astype(jnp.float32).T.T,
             lax.dynamic_slice(a, (i, np.int32(0)), (0, 4)), jnp.broadcast_to(a[:1, :0], (2, 0)).T.reshape(0, 4),
             a]), (x, np.int32(1))),
        ("dynamic_update_slice_empty", lambda a, i: lax.dynamic_update_slice(a, a[:0] * 2, (i, np.int32(0))),
         (x, np.int32(1))),
        ("reduce_window_empty", lambda a: (lax.reduce_window(a[:0], -jnp.inf, lax.max, (1,), (1,), ((1, 1),)),
                                           jnp.cumsum(a[:0], 0).sum(0)), (f32(4),)),
    ]
    return out

#!/usr/bin/env python3
"""Asks real JAX what it prints and computes for the programs cjax's next issues target.

Run where JAX is installed (the lent device machine has it):
    XLA_FLAGS=--xla_force_host_platform_device_count=4 JAX_PLATFORMS=cpu \
        python3 scripts/jax_oracle.py OUT_DIR
It writes one Markdown file per area (`## case` then the text JAX printed, or `ERROR: ...`) and
`random_bits.json` (every sampled array as the hex of its 32-bit words, so comparisons are
exact). The outputs are kept under tests/golden/jax/ as golden files; this script is how they
were made and how to remake them for another JAX version.
"""
import contextlib
import io
import json
import os
import platform
import sys
import traceback

import numpy as np

import jax
import jax.ad_checkpoint
import jax.extend
import jax.numpy as jnp
from jax import lax

OUT = sys.argv[1] if len(sys.argv) > 1 else "."
os.makedirs(OUT, exist_ok=True)


class Section:
    def __init__(self, name):
        self.name = name
        self.parts = [f"# {name}: printed by jax {jax.__version__} ({platform.python_version()})\n"]

    def case(self, title, thunk):
        try:
            text = thunk()
        except Exception as e:  # record the failure and go on: one case must not cost the run
            text = "ERROR: " + "".join(traceback.format_exception_only(type(e), e)).strip()
        self.parts.append(f"## {title}\n```\n{text}\n```\n")

    def write(self):
        with open(os.path.join(OUT, self.name + ".md"), "w") as f:
            f.write("\n".join(self.parts))


def jaxpr(f, *args, **kw):
    return str(jax.make_jaxpr(f, **kw)(*args))


def residuals(f, *args, **kw):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        jax.ad_checkpoint.print_saved_residuals(f, *args, **kw)
    return buf.getvalue().rstrip()


def values(x):
    return np.array2string(np.asarray(x), precision=9, separator=", ", threshold=10_000)


def ar(*shape, scale=0.1, offset=0.0):
    n = int(np.prod(shape)) if shape else 1
    return jnp.asarray((np.arange(n, dtype=np.float32) * scale + offset).reshape(shape))


x3 = jnp.array([0.5, -1.25, 2.0], jnp.float32)
m23 = ar(2, 3, offset=-0.2)
m34 = ar(3, 4, offset=0.3)
b234 = ar(2, 3, 4, offset=-1.0)


# ---------------------------------------------------------------- new primitives (issue 19)
def new_prims():
    s = Section("new_prims")
    v = jnp.array([-0.9, -0.5, 0.0, 0.25, 0.75, 0.999], jnp.float32)
    s.case("erf_inv jaxpr", lambda: jaxpr(lax.erf_inv, x3 / 4))
    s.case("erf_inv values", lambda: values(lax.erf_inv(v)))
    s.case("erf_inv grad jaxpr", lambda: jaxpr(jax.grad(lambda x: lax.erf_inv(x)), 0.5))
    s.case("erf_inv grad jaxpr at float32", lambda: jaxpr(jax.grad(lax.erf_inv), jnp.float32(0.5)))
    s.case("concatenate grad", lambda: jaxpr(jax.grad(lambda a, b: jnp.sum(jnp.concatenate([a, b]) ** 2)), jnp.ones(3), jnp.ones(2)))
    s.case("cumsum reverse grad", lambda: jaxpr(jax.grad(lambda a: jnp.sum(lax.cumsum(a, reverse=True) ** 2)), jnp.ones(3)))
    s.case("erf_inv grad values", lambda: values(jax.vmap(jax.grad(lax.erf_inv))(v)))
    s.case("erf_inv jvp jaxpr", lambda: jaxpr(lambda x, t: jax.jvp(lax.erf_inv, (x,), (t,)), x3 / 4, x3))
    s.case("stop_gradient jaxpr", lambda: jaxpr(lambda x: jnp.sin(lax.stop_gradient(x)) * x, x3))
    s.case("stop_gradient grad jaxpr",
           lambda: jaxpr(jax.grad(lambda x: jnp.sum(jnp.sin(lax.stop_gradient(x)) * x)), x3))
    s.case("stop_gradient jvp jaxpr",
           lambda: jaxpr(lambda x, t: jax.jvp(lambda y: lax.stop_gradient(y) * y, (x,), (t,)), x3, x3))
    s.case("stop_gradient vjp fwd jaxpr",
           lambda: jaxpr(lambda x: jax.vjp(lambda y: lax.stop_gradient(y) * y, x), x3))
    s.case("jnp.sort jaxpr", lambda: jaxpr(jnp.sort, x3))
    s.case("jnp.sort 2d axis 0", lambda: jaxpr(lambda a: jnp.sort(a, axis=0), m23))
    s.case("jnp.sort descending", lambda: jaxpr(lambda a: jnp.sort(a, descending=True), x3))
    s.case("jnp.argsort jaxpr", lambda: jaxpr(jnp.argsort, x3))
    s.case("jnp.argsort stable descending", lambda: jaxpr(lambda a: jnp.argsort(a, stable=True, descending=True), x3))
    s.case("lax.sort two operands num_keys=1",
           lambda: jaxpr(lambda a, b: lax.sort((a, b), num_keys=1), x3, jnp.arange(3)))
    s.case("lax.sort two keys", lambda: jaxpr(lambda a, b: lax.sort((a, b), num_keys=2), x3, x3 * 2))
    s.case("lax.sort unstable", lambda: jaxpr(lambda a: lax.sort(a, is_stable=False), x3))
    s.case("sort grad jaxpr", lambda: jaxpr(jax.grad(lambda a: jnp.sum(jnp.sort(a) * jnp.arange(3.0))), x3))
    s.case("sort jvp jaxpr", lambda: jaxpr(lambda a, t: jax.jvp(jnp.sort, (a,), (t,)), x3, x3))
    s.case("sort grad values",
           lambda: values(jax.grad(lambda a: jnp.sum(jnp.sort(a) * jnp.arange(3.0)))(x3)))
    s.case("sort nan and -0.0 order",
           lambda: values(jnp.sort(jnp.array([jnp.nan, 1.0, -0.0, 0.0, -jnp.inf, jnp.inf, -1.0]))))
    s.case("sort int", lambda: jaxpr(jnp.sort, jnp.array([3, 1, 2], jnp.int32)))
    s.write()


# ---------------------------------------------------------------- vmap (issue 21)
def loss(w, b, x, y):
    return jnp.log(1 + jnp.exp(-y * (jnp.dot(x, w) + b)))


def vmaps():
    s = Section("vmap")
    s.case("sin", lambda: jaxpr(jax.vmap(jnp.sin), m23))
    s.case("add unbatched operand", lambda: jaxpr(jax.vmap(lambda a, b: a + b, in_axes=(0, None)), m23, x3))
    s.case("mul in_axes 1", lambda: jaxpr(jax.vmap(lambda a, b: a * b, in_axes=(1, None)), m23, jnp.float32(2)))
    s.case("out_axes 1", lambda: jaxpr(jax.vmap(jnp.cos, out_axes=1), m23))
    s.case("negative in_axes", lambda: jaxpr(jax.vmap(jnp.sum, in_axes=-1), b234))
    s.case("matvec batched vector", lambda: jaxpr(jax.vmap(jnp.dot, in_axes=(None, 0)), m34, ar(5, 4)))
    s.case("matvec batched matrix", lambda: jaxpr(jax.vmap(jnp.dot, in_axes=(0, None)), b234, ar(4)))
    s.case("matmul both batched", lambda: jaxpr(jax.vmap(jnp.matmul), b234, ar(2, 4, 5)))
    s.case("matmul batched axis 1 and 2",
           lambda: jaxpr(jax.vmap(jnp.matmul, in_axes=(1, 2)), ar(3, 2, 4), ar(4, 5, 2)))
    s.case("dot_general with batch dims under vmap",
           lambda: jaxpr(jax.vmap(lambda a, b: jnp.einsum("bij,bjk->bik", a, b)), ar(2, 3, 4, 5), ar(2, 3, 5, 6)))
    s.case("reduce_sum axis", lambda: jaxpr(jax.vmap(lambda a: jnp.sum(a, axis=1)), b234))
    s.case("reduce_max", lambda: jaxpr(jax.vmap(jnp.max), m23))
    s.case("argmax", lambda: jaxpr(jax.vmap(jnp.argmax), m23))
    s.case("transpose", lambda: jaxpr(jax.vmap(jnp.transpose), b234))
    s.case("reshape", lambda: jaxpr(jax.vmap(lambda a: a.reshape(12)), b234))
    s.case("broadcast", lambda: jaxpr(jax.vmap(lambda a: jnp.broadcast_to(a, (4, 3))), m23))
    s.case("concatenate with unbatched", lambda: jaxpr(jax.vmap(lambda a, b: jnp.concatenate([a, b]), in_axes=(0, None)), m23, x3))
    s.case("slice", lambda: jaxpr(jax.vmap(lambda a: a[1:3]), m34))
    s.case("dynamic_slice batched index",
           lambda: jaxpr(jax.vmap(lambda a, i: lax.dynamic_slice(a, (i,), (2,))), m34, jnp.array([0, 1, 2])))
    s.case("gather batched index", lambda: jaxpr(jax.vmap(lambda a, i: a[i]), m34, jnp.array([0, 1, 2])))
    s.case("pad", lambda: jaxpr(jax.vmap(lambda a: jnp.pad(a, (1, 2))), m23))
    s.case("where batched predicate", lambda: jaxpr(jax.vmap(lambda p, a: jnp.where(p, a, 0.0)), m23 > 0, m23))
    s.case("cumsum", lambda: jaxpr(jax.vmap(jnp.cumsum), m23))
    s.case("iota inside", lambda: jaxpr(jax.vmap(lambda a: a * jnp.arange(3.0)), m23))
    s.case("convert_element_type", lambda: jaxpr(jax.vmap(lambda a: a.astype(jnp.int32)), m23))
    s.case("integer_pow and exp", lambda: jaxpr(jax.vmap(lambda a: jnp.exp(a ** 3)), m23))

    def scan_fn(c0, xs):
        return lax.scan(lambda c, x: (c * x + 1.0, jnp.sin(c)), c0, xs)

    s.case("scan batched carry and xs", lambda: jaxpr(jax.vmap(scan_fn), ar(2), ar(2, 5)))
    s.case("scan batched xs only", lambda: jaxpr(jax.vmap(scan_fn, in_axes=(None, 0)), jnp.float32(1), ar(2, 5)))
    s.case("scan batched carry only", lambda: jaxpr(jax.vmap(scan_fn, in_axes=(0, None)), ar(2), ar(5)))
    s.case("cond batched predicate",
           lambda: jaxpr(jax.vmap(lambda p, a: lax.cond(p, jnp.sin, jnp.cos, a)), jnp.array([True, False]), ar(2)))
    s.case("cond unbatched predicate",
           lambda: jaxpr(jax.vmap(lambda p, a: lax.cond(p, jnp.sin, jnp.cos, a), in_axes=(None, 0)), True, ar(2)))
    s.case("switch batched index",
           lambda: jaxpr(jax.vmap(lambda i, a: lax.switch(i, [jnp.sin, jnp.cos, jnp.tanh], a)), jnp.array([0, 2]), ar(2)))
    s.case("while batched predicate",
           lambda: jaxpr(jax.vmap(lambda a: lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0 + 1.0, a)), ar(3)))
    s.case("while unbatched predicate",
           lambda: jaxpr(jax.vmap(lambda n, a: lax.fori_loop(0, n, lambda i, c: c * 2.0, a), in_axes=(None, 0)), 3, ar(3)))
    s.case("fori_loop batched bound",
           lambda: jaxpr(jax.vmap(lambda n, a: lax.fori_loop(0, n, lambda i, c: c * 2.0, a)), jnp.array([1, 2, 3]), ar(3)))
    s.case("checkpoint", lambda: jaxpr(jax.vmap(jax.checkpoint(lambda a: jnp.sin(jnp.sin(a)))), m23))
    s.case("checkpoint policy",
           lambda: jaxpr(jax.vmap(jax.checkpoint(lambda a, w: jnp.tanh(a @ w), policy=jax.checkpoint_policies.dots_with_no_batch_dims_saveable),
                                  in_axes=(0, None)), b234, ar(4, 5)))
    s.case("vmap of checkpoint policy residuals",
           lambda: residuals(jax.vmap(jax.checkpoint(lambda a, w: jnp.sum(jnp.tanh(a @ w)), policy=jax.checkpoint_policies.dots_with_no_batch_dims_saveable),
                                      in_axes=(0, None)), b234, ar(4, 5)))
    s.case("jit inside", lambda: jaxpr(jax.vmap(jax.jit(lambda a: jnp.sin(a) * 2.0)), m23))
    s.case("jit of vmap", lambda: jaxpr(jax.jit(jax.vmap(jnp.sin)), m23))
    s.case("nested vmap", lambda: jaxpr(jax.vmap(jax.vmap(jnp.dot, in_axes=(0, None)), in_axes=(None, 0)), m34, ar(5, 4)))
    s.case("axis_size no mapped input",
           lambda: jaxpr(jax.vmap(lambda a: a * 2.0, in_axes=None, axis_size=3), jnp.float32(1)))
    s.case("mapped sizes disagree", lambda: jaxpr(jax.vmap(lambda a, b: a + b), ar(2), ar(3)))
    s.case("psum over vmap axis", lambda: jaxpr(jax.vmap(lambda a: a / lax.psum(a, "i"), axis_name="i"), ar(4)))
    s.case("pmax over vmap axis", lambda: jaxpr(jax.vmap(lambda a: a - lax.pmax(a, "i"), axis_name="i"), ar(4)))
    s.case("axis_index over vmap axis", lambda: jaxpr(jax.vmap(lambda a: a * lax.axis_index("i"), axis_name="i"), ar(4)))
    s.case("all_gather over vmap axis", lambda: jaxpr(jax.vmap(lambda a: lax.all_gather(a, "i"), axis_name="i"), ar(4)))
    s.case("per_example_grads jaxpr",
           lambda: jaxpr(lambda w, b, X, Y: jax.vmap(jax.grad(loss, argnums=(0, 1)), in_axes=(None, None, 0, 0))(w, b, X, Y),
                         ar(16, scale=0.01), jnp.float32(0.1), ar(32, 16, scale=0.003, offset=-0.7),
                         jnp.where(jnp.arange(32) % 3 == 0, 1.0, -1.0).astype(jnp.float32)))
    s.case("per_example_grads values",
           lambda: values(jax.vmap(jax.grad(loss, argnums=(0, 1)), in_axes=(None, None, 0, 0))(
               ar(16, scale=0.01), jnp.float32(0.1), ar(32, 16, scale=0.003, offset=-0.7),
               jnp.where(jnp.arange(32) % 3 == 0, 1.0, -1.0).astype(jnp.float32))[1]))
    s.case("grad of vmap", lambda: jaxpr(jax.grad(lambda a: jnp.sum(jax.vmap(jnp.sin)(a))), m23))
    f3 = lambda a: jnp.sin(a) * a[::-1]
    s.case("jacfwd", lambda: jaxpr(jax.jacfwd(f3), x3))
    s.case("jacrev", lambda: jaxpr(jax.jacrev(f3), x3))
    s.case("hessian", lambda: jaxpr(jax.hessian(lambda a: jnp.sum(jnp.sin(a) * a)), x3))
    s.case("jacrev values", lambda: values(jax.jacrev(f3)(x3)))
    s.case("hessian values", lambda: values(jax.hessian(lambda a: jnp.sum(jnp.sin(a) * a))(x3)))
    s.write()


# ---------------------------------------------------------------- custom rules (issue 22)
@jax.custom_jvp
def stable_lse(x):
    m = jnp.max(x)
    return m + jnp.log(jnp.sum(jnp.exp(x - m)))


@stable_lse.defjvp
def _stable_lse_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    y = stable_lse(x)
    return y, jnp.sum(jnp.exp(x - y) * t)


@jax.custom_vjp
def clip_gradient(x):
    return x


def _clip_fwd(x):
    return x, None


def _clip_bwd(_, g):
    return (jnp.clip(g, -1.0, 1.0),)


clip_gradient.defvjp(_clip_fwd, _clip_bwd)


@jax.custom_vjp
def expensive(x, w):
    return jnp.tanh(jnp.sin(x) @ w)


def _expensive_fwd(x, w):
    s = jnp.sin(x)
    y = jnp.tanh(s @ w)
    return y, (s, y, w)


def _expensive_bwd(res, g):
    s, y, w = res
    gz = g * (1 - y * y)
    return (jnp.cos(jnp.arcsin(s)) * (gz @ w.T), s.T @ gz)


expensive.defvjp(_expensive_fwd, _expensive_bwd)


def customs():
    s = Section("custom")
    s.case("custom_jvp jaxpr", lambda: jaxpr(stable_lse, x3))
    s.case("custom_jvp jvp jaxpr", lambda: jaxpr(lambda a, t: jax.jvp(stable_lse, (a,), (t,)), x3, x3))
    s.case("custom_jvp grad jaxpr", lambda: jaxpr(jax.grad(stable_lse), x3))
    s.case("custom_jvp grad values", lambda: values(jax.grad(stable_lse)(x3)))
    s.case("custom_vjp jaxpr", lambda: jaxpr(lambda a: clip_gradient(a) * 3.0, x3))
    s.case("custom_vjp grad jaxpr", lambda: jaxpr(jax.grad(lambda a: jnp.sum(clip_gradient(a) * 3.0)), x3))
    s.case("custom_vjp grad values", lambda: values(jax.grad(lambda a: jnp.sum(clip_gradient(a) * 3.0))(x3)))
    s.case("custom_vjp vjp fwd jaxpr", lambda: jaxpr(lambda a: jax.vjp(clip_gradient, a), x3))
    s.case("custom_vjp under jvp", lambda: jaxpr(lambda a, t: jax.jvp(clip_gradient, (a,), (t,)), x3, x3))
    s.case("custom_vjp residuals expensive", lambda: residuals(lambda a, w: jnp.sum(expensive(a, w)), m23, m34))
    s.case("custom_vjp in checkpoint nothing_saveable residuals",
           lambda: residuals(jax.checkpoint(lambda a, w: jnp.sum(expensive(a, w)), policy=jax.checkpoint_policies.nothing_saveable), m23, m34))
    s.case("custom_vjp in checkpoint grad jaxpr",
           lambda: jaxpr(jax.grad(jax.checkpoint(lambda a, w: jnp.sum(expensive(a, w)), policy=jax.checkpoint_policies.nothing_saveable)), m23, m34))
    s.case("custom_vjp optimize_remat in checkpoint residuals",
           lambda: residuals(jax.checkpoint(lambda a, w: jnp.sum(_expensive_once()(a, w)), policy=jax.checkpoint_policies.nothing_saveable), m23, m34))
    s.case("custom_vjp optimize_remat in checkpoint grad jaxpr",
           lambda: jaxpr(jax.grad(jax.checkpoint(lambda a, w: jnp.sum(_expensive_once()(a, w)), policy=jax.checkpoint_policies.nothing_saveable)), m23, m34))
    s.case("custom_jvp symbolic_zeros jaxpr", lambda: jaxpr(_symbolic(), x3, x3))
    s.case("custom_jvp nondiff_argnums jaxpr", lambda: jaxpr(lambda a: _nondiff(2, a), x3))
    s.case("custom_jvp inside scan", lambda: jaxpr(lambda a: lax.scan(lambda c, v: (c + stable_lse(v), None), 0.0, a)[0], m23))
    s.case("custom_vjp grad inside jit", lambda: jaxpr(jax.grad(jax.jit(lambda a: jnp.sum(clip_gradient(a) ** 2))), x3))
    for name in ["relu", "relu6", "softplus", "silu", "gelu", "log_sigmoid", "sigmoid", "logsumexp", "softmax", "log_softmax", "standardize"]:
        fn = getattr(jax.nn, name, None) or getattr(jax.scipy.special, name, None)
        s.case(f"nn.{name} jaxpr", lambda fn=fn: jaxpr(fn, m23))
        s.case(f"nn.{name} grad jaxpr", lambda fn=fn: jaxpr(jax.grad(lambda a: jnp.sum(fn(a))), m23))
    s.case("nn.gelu approximate=False", lambda: jaxpr(lambda a: jax.nn.gelu(a, approximate=False), m23))
    s.case("nn.softmax axis 0", lambda: jaxpr(lambda a: jax.nn.softmax(a, axis=0), m23))
    s.case("nn.relu grad values at 0", lambda: values(jax.grad(lambda a: jnp.sum(jax.nn.relu(a)))(jnp.array([-1.0, 0.0, 1.0]))))
    s.write()


def _symbolic():
    g = jax.custom_jvp(lambda x: jnp.sin(x))

    def g_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return jnp.sin(x), jnp.cos(x) * t

    g.defjvp(g_jvp, symbolic_zeros=True)
    return lambda a, t: jax.jvp(g, (a,), (t,))


def _expensive_once():
    f = jax.custom_vjp(lambda x, w: jnp.tanh(jnp.sin(x) @ w), optimize_remat=True)
    f.defvjp(_expensive_fwd, _expensive_bwd)
    return f


def _nondiff(n, x):
    f = jax.custom_jvp(lambda n, x: x ** n, nondiff_argnums=(0,))
    f.defjvp(lambda n, p, t: (p[0] ** n, n * p[0] ** (n - 1) * t[0]))
    return f(n, x)


# ---------------------------------------------------------------- PRNG (issue 23)
def bits_of(x):
    a = np.asarray(x)
    if a.dtype == np.float32 or a.dtype == np.int32:
        a = a.view(np.uint32)
    if a.dtype == np.bool_:
        return {"dtype": "bool", "shape": list(a.shape), "values": a.astype(int).ravel().tolist()}
    return {"dtype": str(np.asarray(x).dtype), "shape": list(a.shape), "hex": [f"{int(v):08x}" for v in a.ravel()]}


def random_values(mode):
    r = jax.random
    out = {}

    def put(name, thunk):
        try:
            v = thunk()
            if hasattr(v, "dtype") and jax.dtypes.issubdtype(v.dtype, jax.dtypes.prng_key):
                v = r.key_data(v)
            out[name] = bits_of(v)
        except Exception as e:
            out[name] = {"error": str(e).splitlines()[0]}

    k0, k42 = r.key(0), r.key(42)
    put("PRNGKey(0)", lambda: r.PRNGKey(0))
    put("PRNGKey(42)", lambda: r.PRNGKey(42))
    put("PRNGKey(-1)", lambda: r.PRNGKey(-1))
    put("PRNGKey(2**32+5)", lambda: r.PRNGKey(2**32 + 5))
    put("key_data(key(0))", lambda: r.key_data(k0))
    put("split(key(0))", lambda: r.split(k0))
    put("split(key(0), 4)", lambda: r.split(k0, 4))
    put("split(key(42), (2,3))", lambda: r.split(k42, (2, 3)))
    put("split(PRNGKey(0))", lambda: r.split(r.PRNGKey(0)))
    put("fold_in(key(0), 1)", lambda: r.fold_in(k0, 1))
    put("fold_in(key(42), 12345)", lambda: r.fold_in(k42, 12345))
    put("fold_in(key(0), i) for i in 0..3", lambda: jnp.stack([r.key_data(r.fold_in(k0, i)) for i in range(4)]))
    put("bits(key(0), (8,))", lambda: r.bits(k0, (8,)))
    put("bits(key(0), (3,))", lambda: r.bits(k0, (3,)))
    put("bits(key(42), (2,5))", lambda: r.bits(k42, (2, 5)))
    put("bits(key(0), (4,), uint8)", lambda: r.bits(k0, (4,), jnp.uint8).astype(jnp.uint32))
    put("bits(key(0), (4,), uint16)", lambda: r.bits(k0, (4,), jnp.uint16).astype(jnp.uint32))
    put("uniform(key(0), (8,))", lambda: r.uniform(k0, (8,)))
    put("uniform(key(42), (3,), minval=-2, maxval=5)", lambda: r.uniform(k42, (3,), minval=-2.0, maxval=5.0))
    put("normal(key(0), (8,))", lambda: r.normal(k0, (8,)))
    put("normal(key(42), (2,3))", lambda: r.normal(k42, (2, 3)))
    put("truncated_normal(key(0), -1, 2, (6,))", lambda: r.truncated_normal(k0, -1.0, 2.0, (6,)))
    put("bernoulli(key(0), 0.3, (10,))", lambda: r.bernoulli(k0, 0.3, (10,)))
    put("randint(key(0), (6,), 0, 10)", lambda: r.randint(k0, (6,), 0, 10))
    put("randint(key(42), (6,), -5, 1000)", lambda: r.randint(k42, (6,), -5, 1000))
    put("categorical(key(0), logits (3,5))", lambda: r.categorical(k0, jnp.log(jnp.arange(1.0, 16.0).reshape(3, 5))))
    put("gumbel(key(0), (5,))", lambda: r.gumbel(k0, (5,)))
    put("permutation(key(0), 10)", lambda: r.permutation(k0, 10))
    put("permutation(key(42), arange(6) 2d axis 0)", lambda: r.permutation(k42, jnp.arange(12).reshape(6, 2)))
    put("choice(key(0), 10, (4,), replace=False)", lambda: r.choice(k0, 10, (4,), replace=False))
    put("choice(key(0), 10, (4,))", lambda: r.choice(k0, 10, (4,)))
    put("choice(key(0), 5, (3,), p)", lambda: r.choice(k0, 5, (3,), p=jnp.array([0.1, 0.2, 0.3, 0.25, 0.15])))
    put("dropout mask bernoulli(key(0), 0.9, (4,8))", lambda: r.bernoulli(k0, 0.9, (4, 8)))
    tf = getattr(jax.extend.random, "threefry_2x32", None) or getattr(jax.random, "threefry_2x32", None)
    if tf is None:
        import importlib
        for mod in ("jax._src.prng", "jax._src.random.prng", "jax._src.extend.random"):
            try:
                tf = importlib.import_module(mod).threefry_2x32
                break
            except (ImportError, AttributeError):
                pass
    u32 = lambda *v: jnp.array(v, jnp.uint32)
    put("threefry_2x32 key (0x13198a2e,0x03707344) counts 0..3", lambda: tf(u32(0x13198A2E, 0x03707344), jnp.arange(4, dtype=jnp.uint32)))
    put("threefry_2x32 key (0,0) count (0,0)", lambda: tf(u32(0, 0), u32(0, 0)))
    put("threefry_2x32 key (ffffffff,ffffffff) count (ffffffff,ffffffff)", lambda: tf(u32(0xFFFFFFFF, 0xFFFFFFFF), u32(0xFFFFFFFF, 0xFFFFFFFF)))
    put("threefry_2x32 key (0x13198a2e,0x03707344) count (0x243f6a88,0x85a308d3)", lambda: tf(u32(0x13198A2E, 0x03707344), u32(0x243F6A88, 0x85A308D3)))
    return out


def randoms(section, mode):
    r = jax.random
    k = r.key(0)
    section.case(f"[{mode}] key jaxpr", lambda: jaxpr(lambda s: r.key(s), 0))
    section.case(f"[{mode}] PRNGKey jaxpr", lambda: jaxpr(lambda s: r.PRNGKey(s), 0))
    section.case(f"[{mode}] split jaxpr", lambda: jaxpr(lambda kk: r.split(kk, 3), k))
    section.case(f"[{mode}] fold_in jaxpr", lambda: jaxpr(lambda kk: r.fold_in(kk, 7), k))
    section.case(f"[{mode}] bits jaxpr", lambda: jaxpr(lambda kk: r.bits(kk, (5,)), k))
    section.case(f"[{mode}] uniform jaxpr", lambda: jaxpr(lambda kk: r.uniform(kk, (5,)), k))
    section.case(f"[{mode}] normal jaxpr", lambda: jaxpr(lambda kk: r.normal(kk, (5,)), k))
    section.case(f"[{mode}] bernoulli jaxpr", lambda: jaxpr(lambda kk: r.bernoulli(kk, 0.9, (2, 3)), k))
    section.case(f"[{mode}] raw PRNGKey split jaxpr", lambda: jaxpr(lambda kk: r.split(kk), r.PRNGKey(0)))
    section.case(f"[{mode}] key_data/wrap_key_data jaxpr",
                 lambda: jaxpr(lambda kk: r.wrap_key_data(r.key_data(kk) ^ jnp.uint32(1)), k))
    section.case(f"[{mode}] threefry2x32 inner jaxpr (jit inlined)",
                 lambda: str(jax.make_jaxpr(lambda kk: r.bits(kk, (5,)))(k).eqns[0].params))

    def dropout_mlp(params, x, kk):
        w1, w2 = params
        h = jax.nn.gelu(x @ w1)
        keep = r.bernoulli(kk, 0.9, h.shape)
        h = jnp.where(keep, h / 0.9, 0.0)
        return jnp.sum(jnp.tanh(h @ w2))

    args = ((ar(8, 16, scale=0.01), ar(16, 4, scale=0.01)), ar(4, 8, scale=0.1), k)
    section.case(f"[{mode}] dropout mlp jaxpr", lambda: jaxpr(dropout_mlp, *args))
    for pol in ["nothing_saveable", "dots_saveable", "everything_saveable"]:
        section.case(f"[{mode}] dropout mlp residuals checkpoint {pol}",
                     lambda pol=pol: residuals(jax.checkpoint(dropout_mlp, policy=getattr(jax.checkpoint_policies, pol)), *args))
    section.case(f"[{mode}] dropout mlp residuals no checkpoint", lambda: residuals(dropout_mlp, *args))
    section.case(f"[{mode}] shifts and bitwise jaxpr",
                 lambda: jaxpr(lambda a, b: (lax.shift_left(a, b), lax.shift_right_logical(a, b), lax.shift_right_arithmetic(a.astype(jnp.int32), b.astype(jnp.int32)),
                                             a | b, a & b, a ^ b, ~a, lax.population_count(a)),
                               jnp.array([1, 2, 0xFFFFFFFF], jnp.uint32), jnp.array([3, 31, 4], jnp.uint32)))


def prng():
    s = Section("random")
    allvals = {}
    for mode, flag in [("partitionable", True), ("classic", False)]:
        try:
            jax.config.update("jax_threefry_partitionable", flag)
        except Exception as e:
            allvals[mode] = {"error": str(e)}
            continue
        allvals[mode] = random_values(mode)
        randoms(s, mode)
    jax.config.update("jax_threefry_partitionable", True)
    s.write()
    with open(os.path.join(OUT, "random_bits.json"), "w") as f:
        json.dump({"jax": jax.__version__, "values": allvals}, f, indent=1)


# ---------------------------------------------------------------- model ops (issue 24)
def model_ops():
    s = Section("model_ops")
    emb = ar(10, 4)
    tok = jnp.array([[1, 3, 5], [0, 9, 2]], jnp.int32)
    s.case("embedding take", lambda: jaxpr(lambda e, t: jnp.take(e, t, axis=0), emb, tok))
    s.case("embedding index", lambda: jaxpr(lambda e, t: e[t], emb, tok))
    s.case("embedding grad", lambda: jaxpr(jax.grad(lambda e, t: jnp.sum(e[t] ** 2)), emb, tok))
    s.case("take_along_axis", lambda: jaxpr(lambda a, i: jnp.take_along_axis(a, i, axis=1), m34, jnp.array([[0], [2], [3]])))
    s.case("at set", lambda: jaxpr(lambda a: a.at[1].set(0.0), m34))
    s.case("at add indices", lambda: jaxpr(lambda a, i, v: a.at[i].add(v), x3, jnp.array([0, 2, 0]), x3))
    s.case("at mul/min/max", lambda: jaxpr(lambda a, i: (a.at[i].mul(2.0), a.at[i].min(0.0), a.at[i].max(0.0)), x3, jnp.array([1])))
    # tests/golden/derived/gather_scatter.md's cases, for JAX to print (the file says how they
    # were derived without it).
    x6432, i416 = ar(64, 32), jnp.zeros((4, 16), jnp.int32)
    s.case("x[:, idx]", lambda: jaxpr(lambda a, b: a[:, b], x6432, i416))
    s.case("x[idx1, idx2]", lambda: jaxpr(lambda a, b, c: a[b, c], x6432, i416, i416))
    s.case("x.at[idx].set(y)", lambda: jaxpr(lambda a, b, c: a.at[b].set(c), x6432, i416, ar(4, 16, 32)))
    s.case("two scatter-adds", lambda: jaxpr(lambda a, b, c: a.at[b].add(c).at[b].add(c), ar(8, 3), jnp.zeros(5, jnp.int32), ar(5, 3)))
    s.case("vmap of x[idx]", lambda: jaxpr(jax.vmap(lambda a, b: a[b]), ar(2, 8, 3), jnp.zeros((2, 5), jnp.int32)))
    s.case("one_hot", lambda: jaxpr(lambda t: jax.nn.one_hot(t, 5), jnp.array([0, 3, 4])))
    s.case("einsum 2 operands", lambda: jaxpr(lambda a, b: jnp.einsum("ij,jk->ik", a, b), m23, m34))
    s.case("einsum 3 operands", lambda: jaxpr(lambda a, b, c: jnp.einsum("ij,jk,kl->il", a, b, c), m23, m34, ar(4, 2)))
    s.case("einsum attention", lambda: jaxpr(lambda q, k: jnp.einsum("bhqd,bhkd->bhqk", q, k), ar(2, 2, 3, 4), ar(2, 2, 5, 4)))
    s.case("tensordot", lambda: jaxpr(lambda a, b: jnp.tensordot(a, b, axes=1), m23, m34))
    s.case("tril triu", lambda: jaxpr(lambda a: (jnp.tril(a), jnp.triu(a, 1)), m34))
    s.case("split", lambda: jaxpr(lambda a: jnp.split(a, 2, axis=1), m34))
    s.case("array_split", lambda: jaxpr(lambda a: jnp.array_split(a, 3, axis=1), m34))
    s.case("pad", lambda: jaxpr(lambda a: jnp.pad(a, ((1, 0), (2, 1))), m23))
    s.case("pad grad", lambda: jaxpr(jax.grad(lambda a: jnp.sum(jnp.pad(a, ((1, 0), (2, 1))) ** 2)), m23))
    # The other modes, on jnp.arange(n) * 1.5 + 1: each jaxpr, then its value.
    for title, shape, widths, mode, kw in [
        ("pad edge", (3, 4), ((1, 2), (2, 1)), "edge", {}),
        ("pad reflect, past the array's length", (3,), ((5, 4),), "reflect", {}),
        ("pad reflect odd", (2, 3), ((0, 3), (4, 0)), "reflect", {"reflect_type": "odd"}),
        ("pad reflect odd, one wide", (1,), ((2, 3),), "reflect", {"reflect_type": "odd"}),
        ("pad symmetric", (3,), ((5, 4),), "symmetric", {}),
        ("pad symmetric odd", (3, 4), ((1, 2), (2, 1)), "symmetric", {"reflect_type": "odd"}),
        ("pad wrap", (3, 4), ((1, 2), (2, 1)), "wrap", {}),
        ("pad wrap, no padding", (4,), ((0, 0),), "wrap", {}),
    ]:
        x = ar(*shape, scale=1.5, offset=1.0)
        f = lambda a, w=widths, m=mode, k=kw: jnp.pad(a, w, mode=m, **k)
        s.case(title, lambda f=f, x=x: jaxpr(f, x))
        s.case(title + " value", lambda f=f, x=x: values(f(x)))
    s.case("cumsum cumprod", lambda: jaxpr(lambda a: (jnp.cumsum(a, axis=1), jnp.cumprod(a, axis=0)), m23))
    s.case("cumsum grad", lambda: jaxpr(jax.grad(lambda a: jnp.sum(jnp.cumsum(a, axis=1) ** 2)), m23))
    s.case("var std", lambda: jaxpr(lambda a: (jnp.var(a, axis=1), jnp.std(a)), m23))
    s.case("argmax argmin", lambda: jaxpr(lambda a: (jnp.argmax(a, axis=1), jnp.argmin(a)), m23))
    s.case("top_k", lambda: jaxpr(lambda a: lax.top_k(a, 2), m34))
    s.case("where one broadcast", lambda: jaxpr(lambda p, a: jnp.where(p, a, 0.0), m23 > 0, m23))
    s.case("clip", lambda: jaxpr(lambda a: jnp.clip(a, -0.5, 0.5), m23))
    s.case("linspace", lambda: jaxpr(lambda: jnp.linspace(0.0, 1.0, 5)))
    s.case("layer_norm by hand", lambda: jaxpr(lambda a, g, b: (a - a.mean(-1, keepdims=True)) * lax.rsqrt(a.var(-1, keepdims=True) + 1e-5) * g + b, m34, ar(4), ar(4)))
    s.case("rms_norm nn", lambda: jaxpr(lambda a: jax.nn.rms_norm(a, None, None) if hasattr(jax.nn, "rms_norm") else None, m34))
    s.case("dot_product_attention causal",
           lambda: jaxpr(lambda q, k, v: jax.nn.dot_product_attention(q, k, v, is_causal=True), ar(2, 5, 2, 4), ar(2, 5, 2, 4), ar(2, 5, 2, 4)))
    s.case("dot_product_attention values",
           lambda: values(jax.nn.dot_product_attention(ar(1, 3, 1, 2), ar(1, 3, 1, 2, offset=0.5), ar(1, 3, 1, 2, offset=-0.3), is_causal=True)))
    s.case("initializers glorot_normal values", lambda: values(jax.nn.initializers.glorot_normal()(jax.random.key(0), (3, 4))))
    s.case("initializers lecun_uniform values", lambda: values(jax.nn.initializers.lecun_uniform()(jax.random.key(0), (3, 4))))
    s.case("initializers he_normal values", lambda: values(jax.nn.initializers.he_normal()(jax.random.key(0), (3, 4))))
    s.case("scan checkpointed body residuals",
           lambda: residuals(lambda c, xs: jnp.sum(lax.scan(jax.checkpoint(lambda h, x: (jnp.tanh(h * x), None)), c, xs)[0]), ar(3), ar(5, 3)))
    s.case("while_loop grad error", lambda: jaxpr(jax.grad(lambda a: lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, a)), 1.0))
    s.write()


# ---------------------------------------------------------------- collectives (issue 26)
def collectives():
    s = Section("collectives")
    env = [("i", 4)]
    s.case("psum", lambda: jaxpr(lambda a: lax.psum(a, "i"), x3, axis_env=env))
    s.case("pmax pmin", lambda: jaxpr(lambda a: (lax.pmax(a, "i"), lax.pmin(a, "i")), x3, axis_env=env))
    s.case("pmean", lambda: jaxpr(lambda a: lax.pmean(a, "i"), x3, axis_env=env))
    s.case("axis_index", lambda: jaxpr(lambda: lax.axis_index("i"), axis_env=env))
    s.case("all_gather", lambda: jaxpr(lambda a: lax.all_gather(a, "i"), x3, axis_env=env))
    s.case("all_gather tiled", lambda: jaxpr(lambda a: lax.all_gather(a, "i", tiled=True), x3, axis_env=env))
    s.case("psum_scatter", lambda: jaxpr(lambda a: lax.psum_scatter(a, "i"), ar(4, 3), axis_env=env))
    s.case("psum_scatter tiled", lambda: jaxpr(lambda a: lax.psum_scatter(a, "i", tiled=True), ar(8), axis_env=env))
    s.case("ppermute", lambda: jaxpr(lambda a: lax.ppermute(a, "i", [(0, 1), (1, 2), (2, 3), (3, 0)]), x3, axis_env=env))
    s.case("all_to_all", lambda: jaxpr(lambda a: lax.all_to_all(a, "i", 0, 1), ar(4, 4), axis_env=env))
    s.case("psum grad", lambda: jaxpr(jax.grad(lambda a: jnp.sum(lax.psum(a, "i") ** 2)), x3, axis_env=env))
    s.case("all_gather grad", lambda: jaxpr(jax.grad(lambda a: jnp.sum(lax.all_gather(a, "i", tiled=True) ** 2)), x3, axis_env=env))
    s.case("ppermute grad", lambda: jaxpr(jax.grad(lambda a: jnp.sum(lax.ppermute(a, "i", [(0, 1), (1, 2), (2, 3), (3, 0)]) ** 2)), x3, axis_env=env))

    def mesh():
        devs = np.array(jax.devices()[:4])
        return jax.sharding.Mesh(devs, ("x",))

    P = jax.sharding.PartitionSpec
    smap = getattr(jax, "shard_map", None)
    if smap is None:
        from jax.experimental.shard_map import shard_map as smap
    s.case("devices", lambda: str(jax.devices()))
    s.case("shard_map psum",
           lambda: jaxpr(smap(lambda a: lax.psum(a, "x"), mesh=mesh(), in_specs=P("x"), out_specs=P()), ar(8)))
    s.case("shard_map all_gather",
           lambda: jaxpr(smap(lambda a, w: lax.all_gather(w, "x", tiled=True) @ a, mesh=mesh(), in_specs=(P(), P("x")), out_specs=P("x")), ar(4), ar(8, 4)))
    s.case("shard_map grad data parallel",
           lambda: jaxpr(jax.grad(smap(lambda w, a: lax.pmean(jnp.sum(jnp.tanh(a @ w)), "x"), mesh=mesh(), in_specs=(P(), P("x")), out_specs=P())),
                         ar(4, 2), ar(8, 4)))
    s.write()


for area in (new_prims, vmaps, customs, prng, model_ops, collectives):
    try:
        area()
    except Exception:
        with open(os.path.join(OUT, "failures.txt"), "a") as f:
            f.write(area.__name__ + "\n" + traceback.format_exc() + "\n")
print("done", sorted(os.listdir(OUT)))

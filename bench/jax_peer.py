"""The peer side of bench/tracing_bench.cc: the same N-layer MLP loss traced and differentiated
by JAX (make_jaxpr, and make_jaxpr of vjp), timed the same way. Needs `pip install jax`.

    python3 bench/jax_peer.py            # prints ms per call and eqns per second
"""
import time

import jax
import jax.numpy as jnp


def mlp_loss(Ws, x):
  h = x
  for W in Ws:
    h = jnp.tanh(jnp.matmul(h, W) + 1.0)
  return jnp.sum(h ** 2)


def timed(fn, repeats):
  fn()
  start = time.perf_counter()
  for _ in range(repeats):
    out = fn()
  return (time.perf_counter() - start) / repeats, out


def main():
  x = jax.ShapeDtypeStruct((8, 64), jnp.float32)
  for layers in (10, 100, 1000):
    Ws = [jax.ShapeDtypeStruct((64, 64), jnp.float32)] * layers
    repeats = 20 if layers < 1000 else 3
    t, j = timed(lambda: jax.make_jaxpr(mlp_loss)(Ws, x), repeats)
    n = len(j.jaxpr.eqns)
    print(f"make_jaxpr/{layers}: {t * 1e3:.3f} ms, {n} eqns, {n / t:.0f} eqns/s")
    t, j = timed(lambda: jax.make_jaxpr(lambda *a: jax.vjp(mlp_loss, *a))(Ws, x), repeats)
    n = len(j.jaxpr.eqns)
    print(f"make_jaxpr(vjp)/{layers}: {t * 1e3:.3f} ms, {n} eqns, {n / t:.0f} eqns/s")


if __name__ == "__main__":
  main()

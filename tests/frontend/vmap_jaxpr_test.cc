// make_jaxpr(vmap(f)) against what jax 0.11.2 printed for the same programs
// (tests/golden/jax_0_11_2/vmap.md, written by scripts/jax_oracle.py): the batching rules place
// batch axes, insert transposes and broadcasts, and shift axes (as numpy ints) where JAX's do.
#include <catch2/catch.hpp>

#include "cjax/api.h"
#include "ir/parse/parser.h"
#include "tests/frontend/compiler_test_util.h"
#include "tests/golden/golden.h"

namespace cjax {
namespace {

namespace jnp = cjax::numpy;
using testing::f32;
using testing::i32;

std::string jax(const std::string& title) {
  return golden::jax_case("vmap.md", title);
}

template <class F, class... A>
std::string trace(F f, const A&... a) {
  return to_string(make_jaxpr(f)(a...));
}

const auto none = std::nullopt;

TEST_CASE("vmap prints JAX's elementwise batching: shared axes, size-1 broadcasts, transposes") {
  CHECK(trace(vmap([](const Array& a) { return jnp::sin(a); }), f32({2, 3})) == jax("sin"));
  CHECK(trace(vmap([](const Array& a, const Array& b) { return a + b; }, {0, none}), f32({2, 3}),
              f32({3})) == jax("add unbatched operand"));
  CHECK(trace(vmap([](const Array& a, const Array& b) { return a * b; }, {1, none}), f32({2, 3}),
              f32({})) == jax("mul in_axes 1"));
  CHECK(trace(vmap([](const Array& a) { return jnp::cos(a); }, 0, 1), f32({2, 3})) ==
        jax("out_axes 1"));
  CHECK(trace(vmap([](const Array& a) { return a * jnp::arange(3.0); }), f32({2, 3})) ==
        jax("iota inside"));
  CHECK(trace(vmap([](const Array& a) { return a.astype(DType::i32); }), f32({2, 3})) ==
        jax("convert_element_type"));
  CHECK(trace(vmap([](const Array& a) { return jnp::exp(jnp::power(a, 3)); }), f32({2, 3})) ==
        jax("integer_pow and exp"));
  CHECK(trace(vmap([](const Array& p, const Array& a) { return jnp::where(p, a, 0.0); }),
              ShapeDtype{DType::bool_, {2, 3}}, f32({2, 3})) == jax("where batched predicate"));
}

TEST_CASE("vmap prints JAX's dot_general batching: new batch dimensions or free ones") {
  auto dot = [](const Array& a, const Array& b) { return jnp::dot(a, b); };
  auto matmul = [](const Array& a, const Array& b) { return jnp::matmul(a, b); };
  CHECK(trace(vmap(dot, {none, 0}), f32({3, 4}), f32({5, 4})) == jax("matvec batched vector"));
  CHECK(trace(vmap(dot, {0, none}), f32({2, 3, 4}), f32({4})) == jax("matvec batched matrix"));
  CHECK(trace(vmap(matmul), f32({2, 3, 4}), f32({2, 4, 5})) == jax("matmul both batched"));
  CHECK(trace(vmap(matmul, {1, 2}), f32({3, 2, 4}), f32({4, 5, 2})) ==
        jax("matmul batched axis 1 and 2"));
  CHECK(trace(vmap(vmap(dot, {0, none}), {none, 0}), f32({3, 4}), f32({5, 4})) ==
        jax("nested vmap"));
}

TEST_CASE("vmap prints JAX's reductions and shape ops with shifted axes") {
  CHECK(trace(vmap([](const Array& a) { return jnp::sum(a); }, -1), f32({2, 3, 4})) ==
        jax("negative in_axes"));
  CHECK(trace(vmap([](const Array& a) { return jnp::sum(a, 1); }), f32({2, 3, 4})) ==
        jax("reduce_sum axis"));
  CHECK(trace(vmap([](const Array& a) { return jnp::max(a); }), f32({2, 3})) == jax("reduce_max"));
  CHECK(trace(vmap([](const Array& a) { return jnp::argmax(a); }), f32({2, 3})) == jax("argmax"));
  CHECK(trace(vmap([](const Array& a) { return jnp::transpose(a); }), f32({2, 3, 4})) ==
        jax("transpose"));
  CHECK(trace(vmap([](const Array& a) { return a.reshape({12}); }), f32({2, 3, 4})) ==
        jax("reshape"));
  CHECK(trace(vmap([](const Array& a) {
                return jnp::broadcast_to(a, {4, 3});
              }),
              f32({2, 3})) == jax("broadcast"));
  CHECK(trace(vmap(
                  [](const Array& a, const Array& b) {
                    return jnp::concatenate({a, b});
                  },
                  {0, none}),
              f32({2, 3}), f32({3})) == jax("concatenate with unbatched"));
  CHECK(trace(vmap([](const Array& a) { return a[slice(1, 3)]; }), f32({3, 4})) == jax("slice"));
}

TEST_CASE("vmap prints JAX's batched jit and checkpoint bodies") {
  auto sin_twice = [](const Array& a) { return jnp::sin(jnp::sin(a)); };
  CHECK(trace(vmap(checkpoint(sin_twice)), f32({2, 3})) == jax("checkpoint"));
  auto dense = [](const Array& a, const Array& w) { return jnp::tanh(jnp::matmul(a, w)); };
  // jax 0.11.2 prints this policy as an object; cjax prints it as older JAX did (a function).
  std::string want = jax("checkpoint policy");
  const std::string policy = "policy=DotsSaveable(only_if_no_batch_dims=True)";
  want.replace(want.find(policy), policy.size(),
               "policy=<function dots_with_no_batch_dims_saveable at 0xXXXXXXXXXXXX>");
  CHECK(trace(vmap(checkpoint(dense, policies::dots_with_no_batch_dims_saveable()), {0, none}),
              f32({2, 3, 4}), f32({4, 5})) == want);
  // The policy still saves the dot per example: its batched output, as JAX reports it.
  auto summed = [](const Array& a, const Array& w) {
    return jnp::sum(jnp::tanh(jnp::matmul(a, w)));
  };
  auto batched = vmap(checkpoint(summed, policies::dots_with_no_batch_dims_saveable()), {0, none});
  std::string report;
  for (const SavedResidual& r : saved_residuals(batched, {"a", "w"})(f32({2, 3, 4}), f32({4, 5})))
    report += r.aval.str_short() + " " + r.description + "\n";
  const std::string jax_report = jax("vmap of checkpoint policy residuals");
  const std::string source = "output of dot_general from ";
  // Source locations differ (JAX's point at its oracle script): compare up to them.
  CHECK(report.substr(0, report.find(source) + source.size()) ==
        jax_report.substr(0, jax_report.find(source) + source.size()));
  // cjax::jit inlines under a trace, so a jit eqn comes from jnp.where's _where here (above);
  // vmap's values under jit are checked against the interpreter in tests/cpu/vmap_test.cc.
}

TEST_CASE("vmap of cond prints JAX's: select_n over every branch for a batched predicate") {
  auto f = [](const Array& p, const Array& a) {
    return cond(
        p, [](const Array& x) { return jnp::sin(x); }, [](const Array& x) { return jnp::cos(x); },
        a);
  };
  CHECK(trace(vmap(f), ShapeDtype{DType::bool_, {2}}, f32({2})) == jax("cond batched predicate"));
  CHECK(trace(vmap(f, {none, 0}), ShapeDtype{DType::bool_, {}}, f32({2})) ==
        jax("cond unbatched predicate"));
  using Branch = std::function<Array(const Array&)>;
  auto g = [](const Array& i, const Array& a) {
    return switch_(i,
                   std::vector<Branch>{[](const Array& x) { return jnp::sin(x); },
                                       [](const Array& x) { return jnp::cos(x); },
                                       [](const Array& x) { return jnp::tanh(x); }},
                   a);
  };
  CHECK(trace(vmap(g), i32({2}), f32({2})) == jax("switch batched index"));
}

TEST_CASE("vmap of while prints JAX's: a batched predicate, an unbatched one, a batched bound") {
  auto doubling = [](const Array& a) {
    return while_loop([](const Array& c) { return c < 10.0; },
                      [](const Array& c) { return c * 2.0 + 1.0; }, a);
  };
  CHECK(trace(vmap(doubling), f32({3})) == jax("while batched predicate"));
  auto fori = [](const Array& n, const Array& a) {
    return fori_loop(
        Array::scalar(0.0, DType::i32), n, [](const Array&, const Array& c) { return c * 2.0; }, a);
  };
  CHECK(trace(vmap(fori, {none, 0}), i32({}), f32({3})) == jax("while unbatched predicate"));
  CHECK(trace(vmap(fori), i32({3}), f32({3})) == jax("fori_loop batched bound"));
}

TEST_CASE("vmap with nothing mapped broadcasts to axis_size, as JAX prints it") {
  CHECK(trace(vmap([](const Array& a) { return a * 2.0; }, none, 0, none, 3), f32({})) ==
        jax("axis_size no mapped input"));
}

TEST_CASE("vmap composes with grad as JAX prints it: grad of vmap, per-example gradients") {
  CHECK(trace(grad([](const Array& a) {
                return jnp::sum(vmap([](const Array& x) { return jnp::sin(x); })(a));
              }),
              f32({2, 3})) == jax("grad of vmap"));
  auto loss = [](const Array& w, const Array& b, const Array& x, const Array& y) {
    const Array neg_y = -y;  // first, as Python evaluates it (C++ leaves the order open)
    return jnp::log(1.0 + jnp::exp(neg_y * (jnp::dot(x, w) + b)));
  };
  auto per_example = vmap(grad(loss, argnums<0, 1>), {none, none, 0, 0});
  CHECK(trace(per_example, f32({16}), f32({}), f32({32, 16}), f32({32})) ==
        jax("per_example_grads jaxpr"));
}

TEST_CASE("jacfwd, jacrev and hessian are vmaps of jvp and vjp, and print as JAX's") {
  auto f = [](const Array& a) {
    const Array s = jnp::sin(a);  // first, as Python evaluates it
    return s * lax::rev(a, {0});
  };
  CHECK(trace(jacfwd(f), f32({3})) == jax("jacfwd"));
  CHECK(trace(jacrev(f), f32({3})) == jax("jacrev"));
  const std::string h =
      trace(hessian([](const Array& a) { return jnp::sum(jnp::sin(a) * a); }), f32({3}));
  CHECK(h == jax("hessian"));
}

TEST_CASE("numpy ints in params print as JAX prints them and parse back") {
  const std::string text =
      "{ lambda ; a:f32[2,3,4]. let\n"
      "    b:f32[2,3] = reduce_sum[axes=(np.int64(2),) out_sharding=None] a\n"
      "    c:f32[2,4,3] = broadcast_in_dim[\n"
      "      broadcast_dimensions=(0, np.int64(2))\n"
      "      shape=(2, 4, 3)\n"
      "      sharding=None\n"
      "    ] b\n"
      "  in (c,) }";
  const JaxprRef j = parse_jaxpr(text);
  CHECK(j->eqns[0].params.get_ints("axes") == std::vector<int64_t>{2});
  CHECK(j->eqns[0].params.at("axes").as<ParamTuple>().items[0].numpy_int);
  CHECK(to_string(*j) ==
        "{ lambda ; a:f32[2,3,4]. let\n"
        "    b:f32[2,3] = reduce_sum[axes=(np.int64(2),) out_sharding=None] a\n"
        "    c:f32[2,4,3] = broadcast_in_dim[broadcast_dimensions=(0, np.int64(2))] b\n"
        "  in (c,) }");
}

}  // namespace
}  // namespace cjax

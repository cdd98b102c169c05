// Collectives (psum, pmax, pmin, pmean, axis_index, all_gather, psum_scatter) as jax 0.11.2 printed
// them (tests/golden/jax_0_11_2/collectives.md and vmap.md, written by scripts/jax_oracle.py):
// traced under an axis environment (make_jaxpr(...).axis_env, JAX's axis_env=[('i', 4)]), their
// gradients, and under vmap(axis_name='i'), where batching turns them into array ops.
#include <catch2/catch.hpp>

#include "cjax/api.h"
#include "tests/frontend/compiler_test_util.h"
#include "tests/golden/golden.h"

namespace cjax {
namespace collectives_jaxpr_test {

namespace jnp = cjax::numpy;
using testing::f32;

std::string jax(const std::string& title) {
  return golden::jax_case("collectives.md", title);
}
std::string jax_vmap(const std::string& title) {
  return golden::jax_case("vmap.md", title);
}

template <class F, class... A>
std::string in_env(F f, const A&... a) {
  return to_string(make_jaxpr(f).axis_env({{"i", 4}})(a...));
}
template <class F, class... A>
std::string trace(F f, const A&... a) {
  return to_string(make_jaxpr(f)(a...));
}

TEST_CASE("collectives over a bound axis print as JAX binds them") {
  CHECK(in_env([](const Array& a) { return lax::psum(a, "i"); }, f32({3})) == jax("psum"));
  CHECK(in_env(
            [](const Array& a) {
              return std::tuple{lax::pmax(a, "i"), lax::pmin(a, "i")};
            },
            f32({3})) == jax("pmax pmin"));
  CHECK(in_env([](const Array& a) { return lax::pmean(a, "i"); }, f32({3})) == jax("pmean"));
  CHECK(in_env([] { return lax::axis_index("i"); }) == jax("axis_index"));
  CHECK(in_env([](const Array& a) { return lax::all_gather(a, "i"); }, f32({3})) ==
        jax("all_gather"));
  CHECK(in_env([](const Array& a) { return lax::all_gather(a, "i", 0, true); }, f32({3})) ==
        jax("all_gather tiled"));
  CHECK(in_env([](const Array& a) { return lax::psum_scatter(a, "i"); }, f32({4, 3})) ==
        jax("psum_scatter"));
  CHECK(in_env([](const Array& a) { return lax::psum_scatter(a, "i", 0, true); }, f32({8})) ==
        jax("psum_scatter tiled"));
}

TEST_CASE("psum transposes to psum, all_gather to psum_scatter, as JAX's gradients print") {
  auto psum_loss = [](const Array& a) { return jnp::sum(jnp::power(lax::psum(a, "i"), 2)); };
  CHECK(in_env(grad(psum_loss), f32({3})) == jax("psum grad"));
  auto gather_loss = [](const Array& a) {
    return jnp::sum(jnp::power(lax::all_gather(a, "i", 0, true), 2));
  };
  CHECK(in_env(grad(gather_loss), f32({3})) == jax("all_gather grad"));
}

TEST_CASE("vmap with axis_name batches the collectives over its axis, as JAX prints it") {
  CHECK(trace(vmap([](const Array& a) { return a / lax::psum(a, "i"); }, 0, 0, "i"), f32({4})) ==
        jax_vmap("psum over vmap axis"));
  CHECK(trace(vmap([](const Array& a) { return a - lax::pmax(a, "i"); }, 0, 0, "i"), f32({4})) ==
        jax_vmap("pmax over vmap axis"));
  CHECK(trace(vmap([](const Array& a) { return a * lax::axis_index("i"); }, 0, 0, "i"), f32({4})) ==
        jax_vmap("axis_index over vmap axis"));
  CHECK(trace(vmap([](const Array& a) { return lax::all_gather(a, "i"); }, 0, 0, "i"), f32({4})) ==
        jax_vmap("all_gather over vmap axis"));
}

TEST_CASE("a collective over an unbound axis name fails where it is called") {
  auto f = [](const Array& a) { return lax::psum(a, "j"); };
  CHECK_THROWS_WITH(
      make_jaxpr(vmap(f, 0, 0, "i"))(f32({4})),
      Catch::Contains("collectives_jaxpr_test.cc") && Catch::Contains("unbound axis name: j"));
  CHECK_THROWS_WITH(make_jaxpr([](const Array& a) { return lax::axis_index("i"); })(f32({4})),
                    Catch::Contains("unbound axis name: i"));
}

}  // namespace collectives_jaxpr_test
}  // namespace cjax

// Collectives (psum, pmax, pmin, pmean, axis_index, all_gather, psum_scatter) as jax 0.11.2 printed
// them (tests/golden/jax_0_11_2/collectives.md and vmap.md, written by scripts/jax_oracle.py):
// traced under an axis environment (make_jaxpr(...).axis_env, JAX's axis_env=[('i', 4)]), their
// gradients, and under vmap(axis_name='i'), where batching turns them into array ops.
#include <catch2/catch.hpp>

#include "cjax/api.h"
#include "ir/parse/parser.h"
#include "ir/rules/verify.h"
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

TEST_CASE(
    "ppermute and all_to_all print as JAX binds them, and ppermute transposes to its inverse") {
  const std::vector<std::pair<int64_t, int64_t>> ring = {{0, 1}, {1, 2}, {2, 3}, {3, 0}};
  CHECK(in_env([&](const Array& a) { return lax::ppermute(a, "i", ring); }, f32({3})) ==
        jax("ppermute"));
  CHECK(in_env([](const Array& a) { return lax::all_to_all(a, "i", 0, 1); }, f32({4, 4})) ==
        jax("all_to_all"));
  auto loss = [&](const Array& a) { return jnp::sum(jnp::power(lax::ppermute(a, "i", ring), 2)); };
  CHECK(in_env(grad(loss), f32({3})) == jax("ppermute grad"));
}

TEST_CASE("ppermute and all_to_all check their arguments where they are called") {
  CHECK_THROWS_WITH(in_env(
                        [](const Array& a) {
                          return lax::ppermute(a, "i", {{0, 4}});
                        },
                        f32({3})),
                    Catch::Contains("collectives_jaxpr_test.cc") &&
                        Catch::Contains("ppermute: the pair (0, 4) is outside the axis of size 4"));
  CHECK_THROWS_WITH(in_env(
                        [](const Array& a) {
                          return lax::ppermute(a, "i", {{0, 1}, {2, 1}});
                        },
                        f32({3})),
                    Catch::Contains("sources and destinations must be unique"));
  CHECK_THROWS_WITH(
      in_env([](const Array& a) { return lax::all_to_all(a, "i", 0, 1); }, f32({3, 4})),
      Catch::Contains("all_to_all: the size of the mapped axis i (4) must equal the size of the "
                      "split axis (3)"));
  CHECK_THROWS_WITH(
      in_env([](const Array& a) { return lax::all_to_all(a, "i", 1, 0, true); }, f32({3, 6})),
      Catch::Contains("has to be divisible by the size of the named axis i (4)"));
}

// shard_map with check_vma=False prints as JAX's with check_vma=True (tests/golden/jax_0_11_2/
// collectives.md, "shard_map psum" and "shard_map all_gather") less the varying-axes types: no
// `{V:x}` on avals, psum instead of psum_invariant, no pvary, check_vma=False.
TEST_CASE("shard_map prints its mesh, specs and body as JAX prints shard_map") {
  const Mesh mesh({4}, {"x"});
  auto total = shard_map([](const Array& a) { return lax::psum(a, "x"); }, mesh, {P("x")}, {P()});
  CHECK(trace(total, f32({8})) ==
        "{ lambda ; a:f32[8]. let\n"
        "    b:f32[2] = shard_map[\n"
        "      check_vma=False\n"
        "      in_specs=(P('x',),)\n"
        "      jaxpr={ lambda ; c:f32[2]. let\n"
        "          d:f32[2] = psum[axes=('x',) axis_index_groups=None] c\n"
        "        in (d,) }\n"
        "      mesh=Mesh('x': 4, axis_types=(Auto,))\n"
        "      newly_manual_axes=frozenset({'x'})\n"
        "      out_specs=(P(),)\n"
        "    ] a\n"
        "  in (b,) }");
  auto gathered =
      shard_map([](const Array& a,
                   const Array& w) { return jnp::matmul(lax::all_gather(w, "x", 0, true), a); },
                mesh, {P(), P("x")}, {P("x")});
  const std::string text = trace(gathered, f32({4}), f32({8, 4}));
  CHECK_THAT(text, Catch::Contains("c:f32[32] = shard_map[") &&
                       Catch::Contains("in_specs=(P(), P('x',))") &&
                       Catch::Contains("jaxpr={ lambda ; d:f32[4] e:f32[2,4]. let") &&
                       Catch::Contains("out_specs=(P('x',),)"));
  // It reads back, and prints the same.
  CHECK(to_string(*parse_jaxpr(text)) == text);
}

TEST_CASE("jaxprs with all_to_all, alone or in a shard_map's body, read back and verify") {
  // all_to_all's types need its axis size: unbound, the printed types imply it.
  CHECK(to_string(*parse_jaxpr(jax("all_to_all"))) == jax("all_to_all"));
  const Mesh mesh({2}, {"x"});
  auto f = shard_map([](const Array& a) { return lax::all_to_all(a, "x", 1, 0, true); }, mesh,
                     {P("x")}, {P("x")});
  const std::string text = trace(f, f32({4, 6}));
  CHECK_THAT(text, Catch::Contains("b:f32[8,3] = shard_map[") &&
                       Catch::Contains("d:f32[4,3] = all_to_all["));
  const JaxprRef j = parse_jaxpr(text);
  CHECK(to_string(*j) == text);
  CHECK_NOTHROW(verify(*j));
}

TEST_CASE("shard_map refuses specs that do not fit its arguments, naming the caller") {
  const Mesh mesh({4}, {"x"});
  auto f = [](const Array& a) { return a; };
  CHECK_THROWS_WITH(make_jaxpr(shard_map(f, mesh, {P("x")}, {P("x")}))(f32({6})),
                    Catch::Contains("collectives_jaxpr_test.cc") &&
                        Catch::Contains("does not divide into the 4 blocks the spec P('x',)"));
  CHECK_THROWS_WITH(make_jaxpr(shard_map(f, mesh, {P("y")}, {P("x")}))(f32({8})),
                    Catch::Contains("'y' is not an axis of the mesh Mesh('x': 4"));
  CHECK_THROWS_WITH(make_jaxpr(shard_map(f, mesh, {P("x", "x")}, {P()}))(f32({8, 4})),
                    Catch::Contains("names the mesh axis 'x' twice"));
  CHECK_THROWS_WITH(make_jaxpr(shard_map(f, mesh, {P("x"), P()}, {P()}))(f32({8})),
                    Catch::Contains("in_specs has 2 specs, but there are 1"));
  CHECK_THROWS_WITH(Mesh({2, 2}, {"x", "x"}), Catch::Contains("the axis name 'x' appears twice"));
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

namespace cjax {
namespace collectives_jaxpr_test {

// grad of a function that calls shard_map: a shard_map computing the loss and its residuals
// (each device's, split along their leading dimension over the mesh) and a shard_map of the
// transposed body, whose replicated output's cotangent is shared among the 4 devices (div 4.0)
// and whose replicated input's cotangent sums theirs (psum). tests/mpi checks the values
// against the single-process gradient.
TEST_CASE("grad and vmap of a function calling shard_map: forward and transposed shard_maps") {
  const Mesh mesh({4}, {"x"});
  auto fsdp = [&](const Array& w, const Array& xs) {
    return shard_map(
        [](const Array& shard, const Array& b) {
          return lax::psum(
              jnp::sum(jnp::tanh(jnp::matmul(b, lax::all_gather(shard, "x", 0, true)))), "x");
        },
        mesh, {P("x"), P("x")}, {P()})(w, xs);
  };
  const std::string g = to_string(make_jaxpr(grad(fsdp))(f32({8, 2}), f32({16, 8})));
  // Residuals: the tanh and its derivative, every device's (f32[4,2] each, f32[16,2] in all); the
  // transposed body shares the replicated loss's cotangent among 4 devices and scatters w's.
  CHECK_THAT(g, Catch::Contains("_:f32[] c:f32[16,2] d:f32[16,2] = shard_map[") &&
                    Catch::Contains("out_specs=(P(), P('x',), P('x',))") &&
                    Catch::Contains("in_specs=(P('x',), P('x',), P('x',), P())") &&
                    Catch::Contains("= div q 4.0:f32[]\n") &&
                    Catch::Contains("= reduce_scatter[") &&
                    Catch::Contains("] b c d 1.0:f32[]\n  in (m,) }"));
  CHECK(to_string(*parse_jaxpr(g)) == g);  // it reads back (and verifies)
  // Checkpointed with nothing_saveable, the process keeps only its arguments and gathers again.
  const std::string saved =
      fwd_bwd(checkpoint(fsdp, policies::by_name("nothing_saveable")), {"w", "xs"})
          .residuals_text(f32({8, 2}), f32({16, 8}));
  CHECK(saved == "f32[8,2] from the argument w\nf32[16,8] from the argument xs\n");
  // Data parallel: the replicated weight's cotangent is the psum of the devices'.
  auto dp = [&](const Array& w, const Array& xs) {
    return shard_map(
        [](const Array& v, const Array& b) {
          return lax::pmean(jnp::sum(jnp::tanh(jnp::matmul(b, v))), "x");
        },
        mesh, {P(), P("x")}, {P()})(w, xs);
  };
  // vmap: the batch axis in front of the blocks, not split over the mesh.
  const std::string v =
      to_string(make_jaxpr(vmap(fsdp, {0, std::nullopt}))(f32({3, 8, 2}), f32({16, 8})));
  CHECK_THAT(v, Catch::Contains("c:f32[3] = shard_map[") &&
                    Catch::Contains("in_specs=(P(None, 'x'), P('x',))") &&
                    Catch::Contains("jaxpr={ lambda ; d:f32[3,2,2] e:f32[4,8]. let") &&
                    Catch::Contains("out_specs=(P(None,),)"));
  const std::string d = to_string(make_jaxpr(grad(dp))(f32({4, 2}), f32({8, 4})));
  CHECK_THAT(d, Catch::Contains("ba:f32[4,2] = psum[axes=('x',) axis_index_groups=None] z\n"
                                "        in (ba,) }") &&
                    Catch::Contains("out_specs=(P(),)\n    ] b c d 1.0:f32[]"));
}

}  // namespace collectives_jaxpr_test
}  // namespace cjax

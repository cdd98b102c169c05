// Pytrees: flatten / unflatten, key paths, static leaves, and pytree arguments of make_jaxpr.
#include <catch2/catch.hpp>

#include <map>
#include <tuple>
#include <vector>

#include "cjax/api.h"

using namespace cjax;

namespace mymodel {
enum class Act { relu, gelu };
struct Layer {
  Array w, b;
  Act act = Act::relu;
};
CJAX_PYTREE(Layer, w, b, act)
}  // namespace mymodel

namespace {

std::vector<std::string> paths(const FlatTree& t) {
  std::vector<std::string> out;
  for (const KeyPath& p : t.paths) out.push_back(keystr(p));
  return out;
}

}  // namespace

TEST_CASE("flatten orders leaves as JAX and names them by key path") {
  using Params = std::tuple<std::vector<Array>, std::map<std::string, Array>, mymodel::Layer>;
  Params p{{Array(1.0), Array(2.0)},
           {{"w", Array(3.0)}, {"b", Array(4.0)}},
           mymodel::Layer{Array(5.0), Array(6.0), mymodel::Act::gelu}};
  FlatTree flat = tree_flatten(p);
  REQUIRE(flat.leaves.size() == 6);
  std::vector<double> values;
  for (const Array& a : flat.leaves) values.push_back(a.item());
  // Maps are flattened in sorted key order, like Python dicts in JAX.
  CHECK(values == std::vector<double>{1, 2, 4, 3, 5, 6});
  CHECK(paths(flat) ==
        std::vector<std::string>{"[0][0]", "[0][1]", "[1]['b']", "[1]['w']", "[2].w", "[2].b"});
  // The enum is static: not a leaf, but part of the structure.
  Params q = p;
  std::get<2>(q).act = mymodel::Act::relu;
  CHECK(tree_flatten(q).structure != flat.structure);
  CHECK(tree_flatten(p).structure == flat.structure);
}

TEST_CASE("unflatten and tree_map rebuild the structure") {
  std::vector<std::pair<Array, int>> tree{{Array(1.0), 7}, {Array(2.0), 8}};
  auto doubled = tree_map([](const Array& x) { return x * 2; }, tree);
  CHECK(doubled[0].first.item() == 2);
  CHECK(doubled[1].first.item() == 4);
  CHECK(doubled[1].second == 8);
  std::array<Array, 2> leaves{Array(5.0), Array(6.0)};
  auto rebuilt = tree_unflatten(tree, leaves);
  CHECK(rebuilt[0].first.item() == 5);
  CHECK(rebuilt[1].first.item() == 6);
  std::vector<Array> one{Array(1.0)};
  CHECK_THROWS_AS(tree_unflatten(tree, one), Error);
  std::optional<Array> none;
  CHECK(tree_flatten(none).leaves.empty());
}

TEST_CASE("make_jaxpr takes pytree arguments and names their leaves") {
  using Params = std::vector<Array>;
  auto loss = [](const Params& params, const std::map<std::string, Array>& opt,
                 const mymodel::Layer& p,
                 int scale) { return np::sum(params[0] * opt.at("w") + p.w) * scale; };
  Params params{ShapeDtype{DType::f32, {3}}, ShapeDtype{DType::f32, {3}}};
  std::map<std::string, Array> opt{{"w", ShapeDtype{DType::f32, {3}}}};
  mymodel::Layer layer{ShapeDtype{DType::f32, {3}}, ShapeDtype{DType::f32, {}}};
  TracedFunction t = make_jaxpr(loss, {"params", "opt", "p"}, "loss").trace(params, opt, layer, 3);
  const Jaxpr& j = t.closed.jaxpr;
  CHECK(j.debug->arg_names ==
        std::vector<std::string>{"params[0]", "params[1]", "opt['w']", "p.w", "p.b"});
  CHECK(j.debug->function_name == "loss");
  CHECK(to_string(j) == R"({ lambda ; a:f32[3] b:f32[3] c:f32[3] d:f32[3] e:f32[]. let
    f:f32[3] = mul a c
    g:f32[3] = add f d
    h:f32[] = reduce_sum[axes=(0,) out_sharding=None] g
    i:f32[] = mul h 3.0:f32[]
  in (i,) })");
  // The static int is part of the structure key.
  TracedFunction t2 = make_jaxpr(loss).trace(params, opt, layer, 4);
  CHECK(t2.in_structure != t.in_structure);
  CHECK(t2.closed.jaxpr.debug->arg_names[0] == "args[0][0]");
}

TEST_CASE("pytree outputs are flattened into outvars") {
  // Braced initialisation evaluates left to right (function arguments such as make_tuple's would
  // not be ordered).
  auto f = [](const Array& x) { return std::tuple<Array, std::vector<Array>>{x + 1, {x * 2, x}}; };
  TracedFunction t = make_jaxpr(f).trace(ShapeDtype{DType::f32, {}});
  CHECK(t.num_outputs == 3);
  CHECK(to_string(t.closed.jaxpr) == R"({ lambda ; a:f32[]. let
    b:f32[] = add a 1.0:f32[]
    c:f32[] = mul a 2.0:f32[]
  in (b, c, a) })");
}

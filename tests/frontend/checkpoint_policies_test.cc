// checkpoint (remat): the remat2 eqn it binds, its trace cache, static arguments (the
// is_training example), captured constants, checkpoint_name, and that under every policy the
// gradient equals the gradient without checkpointing.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "cjax/api.h"
#include "passes/policies.h"
#include "tests/frontend/compiler_test_util.h"

using namespace cjax;
using cjax::testing::sin_sin;

namespace {

Array random_f32(std::mt19937& rng, const Shape& shape) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  return array(v, shape);
}

void check_all_close_f32(const Array& a, const Array& b) {
  REQUIRE(a.shape() == b.shape());
  std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i) CHECK(x[i] == Approx(y[i]).epsilon(1e-5).margin(1e-6));
}

// Named values, dots with and without batch dimensions, elementwise ops.
Array layered(const Array& W1, const Array& W2, const Array& B, const Array& x) {
  Array h = checkpoint_name(np::tanh(np::dot(W1, x)), "a");
  h = checkpoint_name(np::sin(np::dot(W2, h)), "b");
  Array batched = np::matmul(B, np::expand_dims(h, {0, 2}) * np::ones({2, 1, 1}));  // [2, 3, 1]
  return np::sum(np::exp(checkpoint_name(batched, "c")) * h[0]);
}

size_t count_eqns(const Jaxpr& j, const std::string& prim) {
  size_t n = 0;
  for (const Eqn& e : j.eqns) n += e.prim->name == prim;
  return n;
}

}  // namespace

TEST_CASE("checkpoint(sin(sin)) has the same value and gradient") {
  auto [value, g] = value_and_grad(checkpoint(sin_sin))(2.0);
  CHECK(value.item() == Approx(0.78907233).epsilon(1e-6));
  CHECK(g.item() == Approx(-0.2556391).epsilon(1e-6));
  auto [v2, g2] = value_and_grad(remat(sin_sin, policies::everything_saveable()))(2.0);
  CHECK(v2.item() == value.item());
  CHECK(g2.item() == g.item());
}

TEST_CASE("checkpoint binds one remat2 eqn with JAX's params") {
  auto g = [](const Array& W, const Array& x) { return np::sin(np::dot(W, x)); };
  Jaxpr j = make_jaxpr(checkpoint(g))(ShapeDtype{DType::f32, {5, 4}}, ShapeDtype{DType::f32, {4}});
  REQUIRE(j.eqns.size() == 1);
  const Eqn& e = j.eqns[0];
  CHECK(e.prim->name == "remat2");
  CHECK(e.params.get_bool("differentiated") == false);
  CHECK(e.params.get_bool("prevent_cse") == true);
  CHECK(e.params.at("policy").is_none());
  const Jaxpr& body = *e.params.get_jaxpr("jaxpr");
  REQUIRE(body.eqns.size() == 2);
  CHECK(body.eqns[0].prim->name == "dot_general");
  CHECK(body.eqns[1].prim->name == "sin");
  std::string text = to_string(j);
  CHECK(text.find("policy=None") != std::string::npos);
  CHECK(text.find("prevent_cse=True") != std::string::npos);
  // With a policy and prevent_cse=False.
  auto g3 = checkpoint(g, policies::dots_saveable(), /*prevent_cse=*/false);
  std::string t3 = to_string(make_jaxpr(g3)(np::ones({5, 4}), np::ones({4})));
  CHECK(t3.find("policy=<function dots_saveable at 0xXXXXXXXXXXXX>") != std::string::npos);
  CHECK(t3.find("prevent_cse=False") != std::string::npos);
  // Eagerly, the remat2 eqn is evaluated.
  Array y = checkpoint(g)(np::ones({5, 4}), np::ones({4}));
  CHECK(y.to_vector<double>() == std::vector<double>(5, std::sin(4.0f)));
}

TEST_CASE("checkpoint turns captured constants into leading inputs") {
  Array W = array({{1.f, 2.f}, {3.f, 4.f}});
  auto h = checkpoint([&](const Array& x) { return np::sin(np::dot(W, x)); });
  Jaxpr j = make_jaxpr(h)(array({1.f, 1.f}));
  REQUIRE(j.constvars.size() == 1);
  REQUIRE(j.eqns.size() == 1);
  const Jaxpr& body = *j.eqns[0].params.get_jaxpr("jaxpr");
  CHECK(body.constvars.empty());
  CHECK(body.invars.size() == 2);  // W, then x
  CHECK(j.eqns[0].inputs.size() == 2);
  CHECK(j.eqns[0].inputs[0].var() == j.constvars[0]);
  std::vector<double> g =
      grad([&](const Array& x) { return np::sum(h(x)); })(array({1.f, 1.f})).to_vector<double>();
  // d/dx sum(sin(W x)) = W^T cos(W x)
  double c0 = std::cos(3.0), c1 = std::cos(7.0);
  CHECK(g[0] == Approx(1 * c0 + 3 * c1).epsilon(1e-5));
  CHECK(g[1] == Approx(2 * c0 + 4 * c1).epsilon(1e-5));
}

TEST_CASE("checkpoint traces once per structure, static values and avals") {
  int traces = 0;
  auto body = [&](const Array& x, double scale) {
    ++traces;
    return np::sin(x) * scale;
  };
  auto c = checkpoint(body);
  c(array({1.f, 2.f}), 2.0);
  c(array({3.f, 4.f}), 2.0);  // same avals and static value: cached
  CHECK(traces == 1);
  CHECK(c.cache_size() == 1);
  c(array({1.f, 2.f, 3.f}), 2.0);  // new shape
  c(array({1.f, 2.f}), 3.0);       // new static value
  CHECK(traces == 3);
  CHECK(c.cache_size() == 3);
  // Under grad the inner trace captures nothing: still cached.
  grad([&](const Array& x) { return np::sum(c(x, 2.0)); })(array({1.f, 2.f}));
  CHECK(traces == 3);
  // A body closing over a tracer of an enclosing trace is traced again each time.
  auto outer = [&](const Array& x) {
    auto inner = checkpoint([&](const Array& y) { return np::sin(x * y); });
    return np::sum(inner(x)) + np::sum(inner(x));
  };
  CHECK(grad(outer)(array({0.5f})).item() == Approx(2 * 2 * 0.5 * std::cos(0.25)).epsilon(1e-5));
}

// The tutorial's static-argument example (jax.checkpoint(foo, static_argnums=(1,))).
TEST_CASE("non-Array arguments are static: the is_training example") {
  auto foo = checkpoint([](const Array& x, bool is_training) {
    if (is_training) return np::sin(np::sin(x));
    return np::cos(x);
  });
  Array x = array(2.0f);
  CHECK(grad(foo)(x, true).item() == Approx(-0.2556391).epsilon(1e-6));
  CHECK(grad(foo)(x, false).item() == Approx(-std::sin(2.0)).epsilon(1e-6));
  CHECK(foo.cache_size() == 2);
  Jaxpr train = make_jaxpr(foo)(x, true), eval = make_jaxpr(foo)(x, false);
  CHECK(count_eqns(*train.eqns.at(0).params.get_jaxpr("jaxpr"), "sin") == 2);
  CHECK(count_eqns(*eval.eqns.at(0).params.get_jaxpr("jaxpr"), "cos") == 1);
}

TEST_CASE("checkpoint_name binds name on every Array leaf and is the identity") {
  std::vector<Array> xs{array({1.f, 2.f}), array(3.f)};
  std::vector<Array> same = checkpoint_name(xs, "h");
  CHECK(same[0].to_vector<double>() == std::vector<double>{1.0, 2.0});
  Jaxpr j = make_jaxpr([](const std::vector<Array>& v) { return checkpoint_name(v, "h"); })(xs);
  REQUIRE(j.eqns.size() == 2);
  for (const Eqn& e : j.eqns) {
    CHECK(e.prim->name == "name");
    CHECK(e.params.get_string("name") == "h");
  }
  CHECK(to_string(j).find("name[name=h]") != std::string::npos);
}

TEST_CASE("save_only_these_names keeps exactly the named values") {
  std::mt19937 rng(11);
  Array W1 = random_f32(rng, {3, 3}), W2 = random_f32(rng, {3, 3}), B = random_f32(rng, {2, 1, 3}),
        x = random_f32(rng, {3});
  std::vector<std::string> names{"W1", "W2", "B", "x"};
  for (const char* name : {"a", "b", "c"}) {
    auto fn = checkpoint(layered, policies::save_only_these_names({name}));
    std::vector<SavedResidual> rs = saved_residuals(fn, names)(W1, W2, B, x);
    size_t named = 0;
    for (const SavedResidual& r : rs) {
      if (r.description.rfind("named", 0) == 0) {
        ++named;
        CHECK(r.description.rfind(std::string("named '") + name + "'", 0) == 0);
      } else {
        CHECK(r.description.rfind("from the argument", 0) == 0);
      }
    }
    CHECK(named == 1);
  }
}

TEST_CASE("under every policy the gradient equals the gradient without checkpointing") {
  std::mt19937 rng(12);
  Array W1 = random_f32(rng, {3, 3}), W2 = random_f32(rng, {3, 3}), B = random_f32(rng, {2, 1, 3}),
        x = random_f32(rng, {3});
  auto reference = grad(layered, argnums<0, 1, 2, 3>)(W1, W2, B, x);
  std::vector<PolicyRef> all{nullptr};
  for (const std::string& name : policies::names())
    all.push_back(policies::by_name(name, {"a", "c"}, {"b"}));
  all.push_back(policies::save_from_both_policies(policies::dots_saveable(),
                                                  policies::save_only_these_names({"b"})));
  all.push_back(policies::save_any_names_but_these({"a"}));
  all.push_back(policies::make_bool_policy(
      "save_sines", [](const Primitive& p, auto, const Params&) { return p.name == "sin"; }));
  all.push_back(policies::make_policy("offload_tanh", [](const Primitive& p, auto, const Params&) {
    return p.name == "tanh" ? policies::offload("device", "pinned_host") : policies::recompute();
  }));
  for (const PolicyRef& policy : all) {
    for (bool prevent_cse : {true, false}) {
      INFO("policy " << (policy ? policy->repr() : "None") << " prevent_cse " << prevent_cse);
      auto fn = checkpoint(layered, policy, prevent_cse);
      auto got = grad(fn, argnums<0, 1, 2, 3>)(W1, W2, B, x);
      check_all_close_f32(std::get<0>(got), std::get<0>(reference));
      check_all_close_f32(std::get<1>(got), std::get<1>(reference));
      check_all_close_f32(std::get<2>(got), std::get<2>(reference));
      check_all_close_f32(std::get<3>(got), std::get<3>(reference));
      // Also through make_jaxpr: the staged program computes the same gradient.
      Jaxpr j = make_jaxpr(grad(fn, argnums<0, 1, 2, 3>))(W1, W2, B, x);
      std::vector<Array> staged = eval_jaxpr(j, {}, std::vector<Array>{W1, W2, B, x});
      check_all_close_f32(staged.at(0), std::get<0>(reference));
      check_all_close_f32(staged.at(3), std::get<3>(reference));
    }
  }
}

TEST_CASE(
    "nothing_saveable saves only the arguments; everything_saveable saves as without "
    "checkpoint") {
  std::mt19937 rng(13);
  Array W1 = random_f32(rng, {3, 3}), W2 = random_f32(rng, {3, 3}), B = random_f32(rng, {2, 1, 3}),
        x = random_f32(rng, {3});
  std::vector<std::string> names{"W1", "W2", "B", "x"};
  for (const SavedResidual& r : saved_residuals(checkpoint(layered), names)(W1, W2, B, x))
    CHECK(r.description.rfind("from the argument", 0) == 0);
  size_t plain = saved_residuals(layered, names)(W1, W2, B, x).size();
  size_t all =
      saved_residuals(checkpoint(layered, policies::everything_saveable()), names)(W1, W2, B, x)
          .size();
  CHECK(all == plain);
}

TEST_CASE("nested checkpoints and grad of grad through checkpoint") {
  auto inner = checkpoint([](const Array& x) { return np::sin(x) * x; });
  auto outer = checkpoint([&](const Array& x) { return inner(np::cos(x)); },
                          policies::everything_saveable());
  auto plain = [](const Array& x) { return np::sin(np::cos(x)) * np::cos(x); };
  Array x = array(0.4f);
  CHECK(grad(outer)(x).item() == Approx(grad(plain)(x).item()).epsilon(1e-5));
  CHECK(grad(grad(outer))(x).item() == Approx(grad(grad(plain))(x).item()).epsilon(1e-5));
}

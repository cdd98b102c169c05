// custom_jvp and custom_vjp: their printouts against jax 0.11.2's (tests/golden/jax_0_11_2/
// custom.md, written by scripts/jax_oracle.py from the same programs), the rules being the ones
// differentiation uses (a deliberately different rule shows in grad), against analytic
// gradients, nested in scan, jit, checkpoint and each other, and the errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <sstream>

#include "cjax/api.h"
#include "ir/parse/parser.h"
#include "tests/cpu/compare.h"
#include "tests/frontend/compiler_test_util.h"
#include "tests/golden/golden.h"

namespace cjax {
namespace custom_derivatives_test {

namespace jnp = cjax::numpy;
using testing::f32;

std::string jax(const std::string& title) {
  return golden::jax_case("custom.md", title);
}
template <class F, class... A>
std::string printed(F f, const A&... a) {
  return to_string(make_jaxpr(f)(a...));
}

// JAX's tutorial function: log-sum-exp with the max subtracted, and its jvp rule. The rule calls
// the function itself, captured by reference (a copy would make the rule own itself).
Array lse_body(const Array& x) {
  const Array m = jnp::max(x);
  return m + jnp::log(jnp::sum(jnp::exp(x - m)));
}
using Unary = CustomJvp<Array, const Array&>;
void define_lse_rule(Unary& lse) {
  lse.defjvp(
      [&lse](const std::tuple<Array>& primals, const std::tuple<Array>& tangents) {
        auto [x] = primals;
        auto [t] = tangents;
        const Array y = lse(x);
        return std::pair{y, jnp::sum(jnp::exp(x - y) * t)};
      },
      "_stable_lse_jvp");
}

auto make_clip_gradient() {
  auto clip = custom_vjp([](const Array& x) { return x; }, "clip_gradient");
  clip.defvjp(
      [](const Array& x) {
        return std::pair{x, std::tuple<>{}};
      },
      [](const std::tuple<>&, const Array& g) { return jnp::clip(g, -1.0, 1.0); }, "_clip_fwd",
      "_clip_bwd");
  return clip;
}

TEST_CASE("custom_jvp prints as JAX binds it, and jvp and grad use its rule") {
  auto lse = custom_jvp(lse_body, "stable_lse");
  define_lse_rule(lse);
  CHECK(printed([&](const Array& a) { return lse(a); }, f32({3})) == jax("custom_jvp jaxpr"));
  CHECK(printed([&](const Array& a, const Array& t) { return jvp(lse, a, t); }, f32({3}),
                f32({3})) == jax("custom_jvp jvp jaxpr"));
  CHECK(printed(grad([&](const Array& a) { return lse(a); }), f32({3})) ==
        jax("custom_jvp grad jaxpr"));
  const Array x = cjax::array(std::vector<float>{0.5f, -1.25f, 2.0f});
  const Array g = grad([&](const Array& a) { return lse(a); })(x);
  const std::vector<double> want = golden::numbers(jax("custom_jvp grad values"));
  for (size_t i = 0; i < want.size(); ++i) CHECK(g[int64_t(i)].item() == Approx(want[i]));
}

TEST_CASE("custom_vjp prints as JAX binds it, grad runs its bwd and jvp refuses it") {
  auto clip = make_clip_gradient();
  CHECK(printed([&](const Array& a) { return clip(a) * 3.0; }, f32({3})) ==
        jax("custom_vjp jaxpr"));
  CHECK(printed([&](const Array& a, const Array& t) { return jvp(clip, a, t); }, f32({3}),
                f32({3})) == jax("custom_vjp under jvp"));
  const Array x = cjax::array(std::vector<float>{0.5f, -2.0f, 3.0f});
  const Array g = grad([&](const Array& a) { return jnp::sum(clip(a) * 3.0); })(x);
  for (int64_t i = 0; i < 3; ++i) CHECK(g[i].item() == 1.0);  // 3, clipped to 1
  CHECK_THROWS_WITH(jvp(clip, x, x),
                    Catch::Contains("can't apply forward-mode autodiff (jvp) to a custom_vjp"));
}

// JAX's oracle's custom_vjp whose fwd saves sin(x), the output and w.
using Binary = CustomVjp<Array, const Array&, const Array&>;
Binary make_expensive() {
  auto f = custom_vjp(
      [](const Array& x, const Array& w) { return jnp::tanh(jnp::matmul(jnp::sin(x), w)); },
      "expensive");
  f.defvjp(
      [](const Array& x, const Array& w) {
        const Array s = jnp::sin(x);
        const Array y = jnp::tanh(jnp::matmul(s, w));
        return std::pair{y, std::tuple{s, y, w}};
      },
      [](const std::tuple<Array, Array, Array>& res, const Array& g) {
        auto [s, y, w] = res;
        const Array gz = g * (1.0 - y * y);
        const Array c = jnp::cos(jnp::arcsin(s));  // Python's left-to-right order, spelled out
        const Array wt = jnp::transpose(w);
        const Array dx = c * jnp::matmul(gz, wt);
        const Array st = jnp::transpose(s);
        return std::tuple{dx, jnp::matmul(st, gz)};
      },
      "_expensive_fwd", "_expensive_bwd");
  return f;
}

// "f32[2,3] output of sin from <where>\n": the report up to each source location.
std::string report_of(const std::vector<SavedResidual>& rs) {
  std::string out;
  for (const SavedResidual& r : rs) {
    std::string d = r.description;
    d = d.substr(0, d.find(" from /"));
    d = d.substr(0, d.find(" from tests/"));
    out += r.aval.str_short() + " " + d + "\n";
  }
  return out;
}
std::string jax_report(const std::string& title) {
  std::string out;
  std::istringstream in(jax(title));
  for (std::string line; std::getline(in, line);) {
    if (const size_t at = line.find(" from /"); at != std::string::npos) line = line.substr(0, at);
    out += line + "\n";
  }
  return out;
}

TEST_CASE("custom_vjp residuals are its fwd's, and under checkpoint the policy decides") {
  const Binary expensive = make_expensive();
  auto loss = [&](const Array& a, const Array& w) { return jnp::sum(expensive(a, w)); };
  CHECK(report_of(saved_residuals(loss, {"a", "w"})(f32({2, 3}), f32({3, 4}))) ==
        jax_report("custom_vjp residuals expensive"));
  auto remat = checkpoint(loss, policies::nothing_saveable());
  CHECK(report_of(saved_residuals(remat, {"a", "w"})(f32({2, 3}), f32({3, 4}))) ==
        jax_report("custom_vjp in checkpoint nothing_saveable residuals"));
  // JAX's program up to one difference: JAX keeps bwd's cotangent of w, which grad does not ask
  // for, in the backward body (two dead eqns); cjax's transpose drops them. Reprinted after the
  // cut, JAX's text names its variables as cjax's printer does.
  std::string jax_text = jax("custom_vjp in checkpoint grad jaxpr");
  const size_t dead = jax_text.find("    p:f32[3,2] = transpose");
  REQUIRE(dead != std::string::npos);
  jax_text.erase(dead, jax_text.find("  in (o,) }") - dead);
  CHECK(printed(grad(remat), f32({2, 3}), f32({3, 4})) == to_string(*parse_jaxpr(jax_text)));
  // The gradient is bwd's: against the analytic one of tanh(sin(x) @ w).
  const Array x = jnp::reshape(jnp::arange(6.0), {2, 3}).astype(DType::f32) * 0.1 - 0.2;
  const Array w = jnp::reshape(jnp::arange(12.0), {3, 4}).astype(DType::f32) * 0.1 + 0.3;
  auto plain = [](const Array& a, const Array& v) {
    return jnp::sum(jnp::tanh(jnp::matmul(jnp::sin(a), v)));
  };
  const Array want = grad(plain)(x, w);
  test::require_close(grad(loss)(x, w).buffer(), want.buffer());
  test::require_close(grad(remat)(x, w).buffer(), want.buffer());
}

TEST_CASE("the rule decides: a custom_vjp whose bwd doubles the cotangent doubles the gradient") {
  auto twice = custom_vjp([](const Array& x) { return jnp::sin(x); }, "twice");
  twice.defvjp(
      [](const Array& x) {
        return std::pair{jnp::sin(x), x};
      },
      [](const Array& x, const Array& g) { return 2.0 * jnp::cos(x) * g; });
  auto odd = custom_jvp([](const Array& x) { return jnp::sin(x); }, "odd");
  odd.defjvp([](const std::tuple<Array>& p, const std::tuple<Array>& t) {
    return std::pair{jnp::sin(std::get<0>(p)), 3.0 * std::get<0>(t)};
  });
  const Array x = cjax::array(std::vector<float>{0.3f, -1.2f});
  const Array gv = grad([&](const Array& a) { return jnp::sum(twice(a)); })(x);
  const Array gj = grad([&](const Array& a) { return jnp::sum(odd(a)); })(x);
  for (int64_t i = 0; i < 2; ++i) {
    CHECK(gv[i].item() == Approx(2.0 * std::cos(x[i].item())));
    CHECK(gj[i].item() == Approx(3.0));
  }
  // Evaluated, both are sin.
  CHECK(twice(x)[0].item() == Approx(std::sin(0.3)));
  CHECK(odd(x)[1].item() == Approx(std::sin(-1.2)));
}

TEST_CASE("nn relu and relu6 are custom_jvp functions of a jitted body, as JAX defines them") {
  CHECK(printed([](const Array& a) { return nn::relu(a); }, f32({2, 3})) == jax("nn.relu jaxpr"));
  CHECK(printed(grad([](const Array& a) { return jnp::sum(nn::relu(a)); }), f32({2, 3})) ==
        jax("nn.relu grad jaxpr"));
  CHECK(printed([](const Array& a) { return nn::relu6(a); }, f32({2, 3})) == jax("nn.relu6 jaxpr"));
  CHECK(printed(grad([](const Array& a) { return jnp::sum(nn::relu6(a)); }), f32({2, 3})) ==
        jax("nn.relu6 grad jaxpr"));
  // The rule, not the max's own derivative, decides the gradient at the kink: 0 at 0.
  const Array g = grad([](const Array& a) { return jnp::sum(nn::relu(a)); })(
      cjax::array(std::vector<float>{-1.0f, 0.0f, 1.0f}));
  const std::vector<double> want = golden::numbers(jax("nn.relu grad values at 0"));
  for (size_t i = 0; i < 3; ++i) CHECK(g[int64_t(i)].item() == want[i]);
}

TEST_CASE("nn softplus and log_sigmoid go through JAX's logaddexp custom_jvp") {
  auto sum_of = [](auto fn) { return [fn](const Array& a) { return jnp::sum(fn(a)); }; };
  auto softplus = [](const Array& a) { return nn::softplus(a); };
  auto log_sigmoid = [](const Array& a) { return nn::log_sigmoid(a); };
  CHECK(printed(softplus, f32({2, 3})) == jax("nn.softplus jaxpr"));
  CHECK(printed(log_sigmoid, f32({2, 3})) == jax("nn.log_sigmoid jaxpr"));
  // Their gradient programs are JAX's eqn for eqn; JAX's printer names the backward jit's
  // inputs after its operands where cjax's reuses the forward body's names.
  // The rule's values: sigmoid(x), and finite at +inf where the body's derivative is NaN.
  const Array x = cjax::array(std::vector<float>{-2.0f, 0.0f, 3.0f, INFINITY});
  const Array g = grad(sum_of(softplus))(x);
  for (int64_t i = 0; i < 3; ++i)
    CHECK(g[i].item() == Approx(1.0 / (1.0 + std::exp(-x[i].item()))).epsilon(1e-5));
  CHECK(g[3].item() == 1.0);
  const Array gl = grad(sum_of(log_sigmoid))(x);
  for (int64_t i = 0; i < 3; ++i)
    CHECK(gl[i].item() == Approx(1.0 / (1.0 + std::exp(x[i].item()))).epsilon(1e-5));
}

TEST_CASE("nn softmax, log_softmax and logsumexp trace as JAX defines them") {
  auto sum_of = [](auto fn) { return [fn](const Array& a) { return jnp::sum(fn(a)); }; };
  auto softmax = [](const Array& a) { return nn::softmax(a); };
  auto log_softmax = [](const Array& a) { return nn::log_softmax(a); };
  auto logsumexp = [](const Array& a) { return nn::logsumexp(a); };
  CHECK(printed(softmax, f32({2, 3})) == jax("nn.softmax jaxpr"));
  CHECK(printed([](const Array& a) { return nn::softmax(a, 0); }, f32({2, 3})) ==
        jax("nn.softmax axis 0"));
  CHECK(printed(log_softmax, f32({2, 3})) == jax("nn.log_softmax jaxpr"));
  CHECK(printed(logsumexp, f32({2, 3})) == jax("nn.logsumexp jaxpr"));
  // Their gradients (JAX 0.11 differentiates `max(-inf, m)` with a newer rule than cjax's
  // balanced one, a dead branch in these programs; the values agree): sum(softmax) is 1, the
  // gradient of sum(log_softmax) is 1 - n softmax, that of logsumexp the softmax of all.
  const Array x = jnp::reshape(jnp::arange(6.0), {2, 3}).astype(DType::f32) * 0.3 - 0.2;
  const Array sm = nn::softmax(x);
  const Array all = jnp::reshape(nn::softmax(jnp::reshape(x, {6})), {2, 3});
  const Array g_sm = grad(sum_of(softmax))(x), g_lsm = grad(sum_of(log_softmax))(x);
  const Array g_lse = grad(sum_of(logsumexp))(x);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j) {
      CHECK(g_sm[i][j].item() == Approx(0.0).margin(1e-6));
      CHECK(g_lsm[i][j].item() == Approx(1.0 - 3.0 * sm[i][j].item()).epsilon(1e-5));
      CHECK(g_lse[i][j].item() == Approx(all[i][j].item()).epsilon(1e-5));
    }
}

// The custom_jvp_call eqn of a printed program, up to its operands.
std::string custom_call_block(const std::string& text) {
  const size_t begin = text.find("custom_jvp_call[");
  const size_t end = text.find("] d\n", begin);
  return begin == std::string::npos || end == std::string::npos ? ""
                                                                : text.substr(begin, end - begin);
}

TEST_CASE("custom_jvp inside scan prints JAX's custom_jvp_call in the body, and differentiates") {
  auto lse = custom_jvp(lse_body, "stable_lse");
  define_lse_rule(lse);
  auto f = [&](const Array& a) {
    return scan(
               [&](const Array& c, const Array& v) {
                 return std::pair{c + lse(v), std::tuple<>{}};
               },
               Array(0.0), a)
        .first;
  };
  // JAX 0.11 prints scan's params in a newer form (ft_in/ft_out) than the 0.10 one cjax emits;
  // the custom call in the body is the same, eqn for eqn.
  const std::string block = custom_call_block(printed(f, f32({2, 3})));
  REQUIRE(!block.empty());
  CHECK(block == custom_call_block(jax("custom_jvp inside scan")));
  // grad of the scan: each row's softmax, from the rule.
  const Array x = jnp::reshape(jnp::arange(6.0), {2, 3}).astype(DType::f32) * 0.4 - 1.0;
  const Array g = grad(f)(x);
  for (int64_t i = 0; i < 2; ++i) {
    const Array sm = jnp::exp(x[i] - lse(x[i]));
    for (int64_t j = 0; j < 3; ++j) CHECK(g[i][j].item() == Approx(sm[j].item()).epsilon(1e-5));
  }
}

TEST_CASE("nn silu, gelu and sigmoid print as JAX defines them") {
  CHECK(printed([](const Array& a) { return nn::silu(a); }, f32({2, 3})) == jax("nn.silu jaxpr"));
  CHECK(printed([](const Array& a) { return nn::gelu(a); }, f32({2, 3})) == jax("nn.gelu jaxpr"));
  CHECK(printed([](const Array& a) { return nn::gelu(a, false); }, f32({2, 3})) ==
        jax("nn.gelu approximate=False"));
  CHECK(printed([](const Array& a) { return nn::sigmoid(a); }, f32({2, 3})) ==
        jax("nn.sigmoid jaxpr"));
  CHECK(printed(grad([](const Array& a) { return jnp::sum(nn::sigmoid(a)); }), f32({2, 3})) ==
        jax("nn.sigmoid grad jaxpr"));
  CHECK(printed(grad([](const Array& a) { return jnp::sum(nn::silu(a)); }), f32({2, 3})) ==
        jax("nn.silu grad jaxpr"));
}

}  // namespace custom_derivatives_test
}  // namespace cjax

// The built-in examples custom/clip_gradient and custom/stable_logsumexp: their printouts and
// gradients against what jax 0.11.2 printed and computed (tests/golden/jax_0_11_2/custom.md);
// custom/remat_fwd_once and custom/remat_fwd_named: what their backward programs recompute.
#include <catch2/catch.hpp>

#include <cmath>

#include "examples/registry.h"
#include "ir/print/printer.h"
#include "passes/saved_residuals.h"
#include "passes/vjp.h"
#include "runtime/interpreter.h"
#include "tests/golden/golden.h"

namespace cjax {
namespace custom_example_test {

// The gradient of the example's scalar output, by the vjp pass and the interpreter.
std::vector<double> gradient(const examples::Example& ex) {
  const Jaxpr f = ex.make_jaxpr();
  VjpResult r = vjp_jaxpr(f);
  std::vector<runtime::Buffer> fwd = runtime::eval_jaxpr(r.fwd, ex.default_inputs());
  std::vector<runtime::Buffer> bwd_in(fwd.begin() + 1, fwd.end());
  bwd_in.push_back(runtime::Buffer::full(f.outvars[0].aval(), 1.0));
  return runtime::eval_jaxpr(r.bwd, bwd_in).at(0).to_doubles();
}

TEST_CASE("custom/stable_logsumexp prints JAX's custom_jvp_call and differentiates by its rule") {
  const examples::Example& ex = examples::get("custom/stable_logsumexp");
  CHECK(to_string(ex.make_jaxpr()) == golden::jax_case("custom.md", "custom_jvp jaxpr"));
  const std::vector<double> want =
      golden::numbers(golden::jax_case("custom.md", "custom_jvp grad values"));
  const std::vector<double> got = gradient(ex);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).epsilon(1e-5));
}

TEST_CASE("custom/clip_gradient's bwd clips the gradient of sum(3 x) to 1") {
  const examples::Example& ex = examples::get("custom/clip_gradient");
  const std::string printed = to_string(ex.make_jaxpr());
  CHECK(printed.find("custom_vjp_call[\n      name=clip_gradient\n      bwd=_clip_bwd") !=
        std::string::npos);
  for (double g : gradient(ex)) CHECK(g == 1.0);
}

// How many eqns of `prim` a printed program has, nested ones included.
size_t count_eqns(const std::string& text, const std::string& prim) {
  size_t n = 0;
  const std::string head = " = " + prim;
  for (size_t at = text.find(head); at != std::string::npos; at = text.find(head, at + 1)) {
    const char next = at + head.size() < text.size() ? text[at + head.size()] : ' ';
    n += next == ' ' || next == '[';
  }
  return n;
}

std::vector<std::string> residuals(const Jaxpr& f, const VjpResult& r) {
  std::vector<std::string> out;
  for (const SavedResidual& s : saved_residuals(r.fwd, r.num_residuals, f.debug->arg_names))
    out.push_back(s.aval.str_short() + " " +
                  s.description.substr(0, s.description.find(" from /")));
  return out;
}

// The gradient with respect to both arguments, by the vjp pass and the interpreter, flattened.
std::vector<double> both_gradients(const Jaxpr& f, const std::vector<runtime::Buffer>& in) {
  VjpResult r = vjp_jaxpr(f);
  std::vector<runtime::Buffer> fwd = runtime::eval_jaxpr(r.fwd, in);
  std::vector<runtime::Buffer> bwd_in(fwd.begin() + 1, fwd.end());
  bwd_in.push_back(runtime::Buffer::full(f.outvars[0].aval(), 1.0));
  std::vector<double> out;
  for (const runtime::Buffer& g : runtime::eval_jaxpr(r.bwd, bwd_in)) {
    std::vector<double> v = g.to_doubles();
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

TEST_CASE("custom/remat_fwd_once: the backward program recomputes the custom_vjp's fwd once") {
  const examples::Example& ex = examples::get("custom/remat_fwd_once");
  const Jaxpr f = ex.make_jaxpr();
  const VjpResult r = vjp_jaxpr(f);
  // nothing_saveable: only the checkpoint's inputs are kept.
  CHECK(residuals(f, r) == std::vector<std::string>{"f32[8,16] from the argument x",
                                                    "f32[16,32] from the argument w"});
  // The fwd's tanh runs once forward and once in the backward program, where the bwd itself
  // needs none (it reads the saved activation): recomputed once, not twice.
  CHECK(count_eqns(to_string(r.fwd), "tanh") == 1);
  CHECK(count_eqns(to_string(r.bwd), "tanh") == 1);
  CHECK(count_eqns(to_string(r.bwd), "dot_general") == 3);  // the recomputed x@w, dx, dw

  // The gradient is the bwd's, equal to that of the plain function: 2 y (1 - y^2) through x@w.
  const std::vector<runtime::Buffer> in = ex.default_inputs();
  const std::vector<double> x = in[0].to_doubles(), w = in[1].to_doubles();
  std::vector<double> gz(8 * 32), want_x(8 * 16, 0.0), want_w(16 * 32, 0.0);
  for (size_t i = 0; i < 8; ++i)
    for (size_t j = 0; j < 32; ++j) {
      double z = 0;
      for (size_t k = 0; k < 16; ++k) z += x[i * 16 + k] * w[k * 32 + j];
      const double y = std::tanh(z);
      gz[i * 32 + j] = 2 * y * (1 - y * y);
    }
  for (size_t i = 0; i < 8; ++i)
    for (size_t k = 0; k < 16; ++k)
      for (size_t j = 0; j < 32; ++j) {
        want_x[i * 16 + k] += gz[i * 32 + j] * w[k * 32 + j];
        want_w[k * 32 + j] += x[i * 16 + k] * gz[i * 32 + j];
      }
  std::vector<double> want = want_x;
  want.insert(want.end(), want_w.begin(), want_w.end());
  const std::vector<double> got = both_gradients(f, in);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).margin(1e-5));
}

TEST_CASE("custom/remat_fwd_named: a checkpoint_name inside the fwd is what the policy saves") {
  const examples::Example& ex = examples::get("custom/remat_fwd_named");
  const Jaxpr f = ex.make_jaxpr();
  const VjpResult r = vjp_jaxpr(f);
  const std::vector<std::string> res = residuals(f, r);
  REQUIRE(res.size() == 3);
  CHECK(res[0] == "f32[8,16] from the argument x");
  CHECK(res[1] == "f32[16,32] from the argument w");
  CHECK(res[2].rfind("f32[8,32] named 'features'", 0) == 0);
  // Nothing of the fwd is recomputed.
  CHECK(count_eqns(to_string(r.bwd), "tanh") == 0);
  CHECK(count_eqns(to_string(r.bwd), "dot_general") == 2);
  // The same gradient as the nothing_saveable twin.
  const std::vector<double> a = both_gradients(f, ex.default_inputs());
  const std::vector<double> b =
      both_gradients(examples::get("custom/remat_fwd_once").make_jaxpr(), ex.default_inputs());
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) CHECK(a[i] == Approx(b[i]).margin(1e-6));
}

}  // namespace custom_example_test
}  // namespace cjax

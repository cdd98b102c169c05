// The tutorial's recursive checkpointing: the residuals of a chain of D sins grow like log2(D)
// with recursive_checkpoint, and like D without it.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>

#include "cjax/api.h"
#include "examples/tutorial_programs.h"
#include "passes/saved_residuals.h"
#include "passes/vjp.h"
#include "runtime/interpreter.h"

using namespace cjax;
namespace np = cjax::numpy;
using cjax::examples::Fn;
using cjax::examples::recursive_checkpoint;
using cjax::examples::sin_fn;

namespace {

Fn chain(size_t d) {
  return [d](const Array& x) {
    Array h = x;
    for (size_t i = 0; i < d; ++i) h = np::sin(h);
    return h;
  };
}

size_t residual_count(const Fn& f) {
  Jaxpr j = make_jaxpr(f, {"x"})(ShapeDtype{DType::f32, {}, true});
  return vjp_jaxpr(j).num_residuals;
}

}  // namespace

TEST_CASE("recursive checkpointing stores O(log2 D) residuals, a plain chain O(D)") {
  for (size_t d = 8; d <= 1024; d *= 2) {
    INFO("D = " << d);
    size_t recursive = residual_count(recursive_checkpoint(std::vector<Fn>(d, sin_fn)));
    size_t plain = residual_count(chain(d));
    double log2d = std::log2(static_cast<double>(d));
    CHECK(plain == d);  // one cos per sin
    CHECK(recursive <= 2 * static_cast<size_t>(log2d));
    CHECK(recursive >= static_cast<size_t>(log2d) - 1);
  }
}

TEST_CASE("recursive checkpointing computes the chain's gradient") {
  Fn f = recursive_checkpoint(std::vector<Fn>(16, sin_fn));
  Jaxpr j = make_jaxpr(f, {"x"})(ShapeDtype{DType::f32, {}, true});
  VjpResult r = vjp_jaxpr(j);
  std::vector<runtime::Buffer> args{runtime::Buffer::full(ShapedArray(DType::f32, {}), 3.0)};
  auto fwd = runtime::eval_jaxpr(r.fwd, args);
  std::vector<runtime::Buffer> bwd_in(fwd.begin() + 1, fwd.end());
  bwd_in.push_back(runtime::Buffer::full(ShapedArray(DType::f32, {}), 1.0));
  double grad = runtime::eval_jaxpr(r.bwd, bwd_in)[0].element(0);
  double x = 3.0, want = 1.0;
  for (int i = 0; i < 16; ++i) {
    want *= std::cos(x);
    x = std::sin(x);
  }
  CHECK(fwd[0].element(0) == Approx(x).epsilon(1e-5));
  CHECK(grad == Approx(want).epsilon(1e-4));
}

// Scans under checkpoint schedules compiled: the forward and backward programs of an RNN's
// gradient give the interpreter's values (within the back end's float tolerance), reversed too.
#include <catch2/catch.hpp>

#include "cjax/api.h"
#include "compiler/cpu/executable.h"
#include "passes/vjp.h"
#include "runtime/interpreter.h"
#include "tests/cpu/compare.h"

namespace cjax {
namespace scan_schedules_cpu_test {
namespace {

namespace np = cjax::numpy;

Jaxpr rnn(const ScanSchedule& s, bool reverse) {
  auto loss = [&](const Array& a, const Array& h0, const Array& xs) {
    auto step = [&](const Array& h, const Array& x) {
      Array next = np::tanh(h * a + x);
      return std::pair{next, next * 2.0};
    };
    auto [h, ys] = scan(step, h0, xs, {.reverse = reverse, .checkpoint = s});
    return np::sum(h) + np::sum(ys * ys);
  };
  return make_jaxpr(loss)(ShapeDtype{DType::f32, {8}}, ShapeDtype{DType::f32, {8}},
                          ShapeDtype{DType::f32, {37, 8}});
}

TEST_CASE("scan schedules compiled: the interpreter's gradient, forward and reversed") {
  for (const ScanSchedule& s :
       {scan_schedules::every_step(), scan_schedules::nested(2), scan_schedules::binomial(3)}) {
    for (bool reverse : {false, true}) {
      INFO(s.str() << (reverse ? ", reversed" : ""));
      const VjpResult r = vjp_jaxpr(rnn(s, reverse));
      const auto in = test::random_inputs(r.fwd, -0.5, 0.5, 17);
      const auto fwd = lower::compile(r.fwd, "forward")->run(in);
      const auto fwd_want = runtime::eval_jaxpr(r.fwd, in);
      REQUIRE(fwd.size() == fwd_want.size());
      for (size_t i = 0; i < fwd.size(); ++i) test::require_close(fwd[i], fwd_want[i]);
      std::vector<runtime::Buffer> bwd_in(fwd_want.end() - ptrdiff_t(r.num_residuals),
                                          fwd_want.end());
      bwd_in.push_back(runtime::Buffer::full(r.bwd.invars.back().aval(), 1.0));
      const auto bwd = lower::compile(r.bwd, "backward")->run(bwd_in);
      const auto bwd_want = runtime::eval_jaxpr(r.bwd, bwd_in);
      REQUIRE(bwd.size() == bwd_want.size());
      for (size_t i = 0; i < bwd.size(); ++i) test::require_close(bwd[i], bwd_want[i]);
    }
  }
}

}  // namespace
}  // namespace scan_schedules_cpu_test
}  // namespace cjax

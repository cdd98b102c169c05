// Scans under checkpoint schedules compiled: the forward and backward programs of an RNN's
// gradient give the interpreter's values (within the back end's float tolerance), reversed too.
#include <catch2/catch.hpp>

#include <limits>

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
  for (const ScanSchedule& s : {scan_schedules::every_step(), scan_schedules::nested(2),
                                scan_schedules::binomial(3), scan_schedules::binomial(8)}) {
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

// The backward program of a 64-step binomial(3) schedule: its checkpointed ranges repeat.
VjpResult binomial_gradient() {
  auto loss = [&](const Array& a, const Array& h0) {
    auto step = [&](const Array& h, const std::tuple<>&) {
      return std::pair{h + 0.01 * (np::tanh(a * h) - 0.1 * h), std::tuple<>{}};
    };
    const ScanOptions options{.length = 64, .checkpoint = scan_schedules::binomial(3)};
    return np::sum(scan(step, h0, std::tuple<>{}, options).first);
  };
  return vjp_jaxpr(make_jaxpr(loss)(ShapeDtype{DType::f32, {16}}, ShapeDtype{DType::f32, {16}}));
}

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST_CASE("scan schedules compiled: a repeated range is one function, called where it repeats") {
  const VjpResult r = binomial_gradient();
  // Every call compiled in place, as one function (cut into segments, the equal loops would be
  // shared as segments instead).
  const lower::CompileOptions inline_all{.max_whole_eqns = std::numeric_limits<size_t>::max(),
                                         .outline_repeated_calls = false};
  const std::string outlined = lower::lower_to_text(r.bwd, lower::Stage::mlir);
  const std::string inlined = lower::lower_to_text(r.bwd, lower::Stage::mlir, "", inline_all);
  INFO(count_of(outlined, "\n") << " lines outlined, " << count_of(inlined, "\n") << " inlined");
  CHECK(count_of(inlined, "func.func private @body") == 0);
  const size_t functions = count_of(outlined, "func.func private @body");
  CHECK(functions > 0);
  CHECK(count_of(outlined, "call @body") > functions);  // each called more than once
  CHECK(count_of(outlined, "\n") * 2 < count_of(inlined, "\n"));

  const auto fwd_out = runtime::eval_jaxpr(r.fwd, test::random_inputs(r.fwd, -1.0, 1.0, 3));
  std::vector<runtime::Buffer> in(fwd_out.end() - ptrdiff_t(r.num_residuals), fwd_out.end());
  in.push_back(runtime::Buffer::full(r.bwd.invars.back().aval(), 1.0));
  const auto want = runtime::eval_jaxpr(r.bwd, in);
  // (Compiled in place, the other tests' way, it takes several times as long.)
  const auto got = lower::compile(r.bwd, "backward")->run(in);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) test::require_close(got[i], want[i]);
}

}  // namespace
}  // namespace scan_schedules_cpu_test
}  // namespace cjax

// Checkpoint schedules for long scans (passes/scan_schedules.h) and reverse mode through a bounded
// while loop: every schedule computes the un-checkpointed scan's values and gradients bit for bit
// (a loop constant's cotangent included); binomial(s) stores s carries and repeats Griewank's
// optimal count of steps, less the first sweep's; the printed programs are nested scans and
// remat2s.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "cjax/api.h"
#include "ir/print/printer.h"
#include "passes/memory/memory_model.h"
#include "tests/control_flow/fd_util.h"

namespace scan_schedules_test {

using namespace cjax;
using cftest::random_f64;

struct Loss {
  ScanSchedule schedule;
  bool reverse = false;
  // An RNN over xs: h' = tanh(h * a + x), every h also an output; the loss reads both.
  Array operator()(const Array& a, const Array& h0, const Array& xs) const {
    auto step = [&](const Array& h, const Array& x) {
      Array next = np::tanh(h * a + x);
      return std::pair{next, next * 2.0};
    };
    auto [h, ys] = scan(step, h0, xs, {.reverse = reverse, .checkpoint = schedule});
    return np::sum(h) + np::sum(ys * ys);
  }
};

std::vector<double> values(const Array& x) {
  return x.to_vector<double>();
}

const std::vector<ScanSchedule> kSchedules{
    scan_schedules::every_step(), scan_schedules::nested(2),   scan_schedules::nested(3),
    scan_schedules::binomial(1),  scan_schedules::binomial(2), scan_schedules::binomial(3),
    scan_schedules::binomial(8)};

TEST_CASE("scan schedules: the values and gradients of the un-checkpointed scan") {
  std::mt19937 rng(5);
  const Array a = random_f64(rng, {4}, 0.5, 1.5);
  const Array h0 = random_f64(rng, {4});
  for (int64_t length : {0, 1, 2, 7, 37}) {
    const Array xs = random_f64(rng, {length, 4});
    for (bool reverse : {false, true}) {
      const Loss plain{scan_schedules::none(), reverse};
      const double want = plain(a, h0, xs).item();
      auto [ga, gh, gx] = grad(plain, argnums<0, 1, 2>)(a, h0, xs);
      for (const ScanSchedule& s : kSchedules) {
        INFO(s.str() << ", " << length << " steps" << (reverse ? ", reversed" : ""));
        const Loss scheduled{s, reverse};
        CHECK(scheduled(a, h0, xs).item() == want);
        auto [sa, sh, sx] = grad(scheduled, argnums<0, 1, 2>)(a, h0, xs);
        // Every cotangent runs through the same ops in the same order; `a`'s is summed step by
        // step across the chunks (passes/cotangent_sums.h).
        CHECK(values(sh) == values(gh));
        CHECK(values(sx) == values(gx));
        CHECK(values(sa) == values(ga));
      }
    }
  }
}

// A linear step: its derivative needs only its input, so the backward pass repeats a step only to
// recompute a carry that was not stored, and its primal FLOPs count those steps exactly.
Array linear_loop(const Array& a, const Array& h0, const ScanSchedule& s, int64_t length = 100) {
  auto step = [&](const Array& h, const std::tuple<>&) {
    return std::pair{h * a + 1.0, std::tuple<>{}};
  };
  return np::sum(scan(step, h0, std::tuple<>{}, {.length = length, .checkpoint = s}).first);
}

memory::StepModel model_of(const ScanSchedule& s, int64_t length = 100) {
  const Array a = np::ones({64}, DType::f64), h0 = np::ones({64}, DType::f64);
  return memory::model_vjp(make_jaxpr(
      [&](const Array& x, const Array& y) { return linear_loop(x, y, s, length); })(a, h0));
}

constexpr size_t kCarry = 64 * 8;  // f64[64]

double step_flops() {
  return model_of(scan_schedules::none(), 100).forward_flops -
         model_of(scan_schedules::none(), 99).forward_flops;
}

TEST_CASE("scan schedules: binomial(s) stores s carries and repeats about Griewank's count") {
  const double step = step_flops();
  REQUIRE(step > 0);
  CHECK(model_of(scan_schedules::none()).residual_bytes == 100 * kCarry);
  for (int s : {2, 4, 8, 16}) {
    INFO("binomial(" << s << ")");
    const memory::StepModel m = model_of(scan_schedules::binomial(s));
    CHECK(m.residual_bytes == size_t(s) * kCarry);
    // Griewank's t counts every advance, the first forward sweep's L - 1 included; the backward
    // pass repeats exactly the rest, his optimum.
    const double repeated = m.recompute_flops / step;
    const auto t = double(binomial_extra_steps(100, s));
    CHECK(repeated == t - 99);
  }
  // And for every short loop with few snapshots, where one step more or less shows.
  for (int s : {1, 2, 3})
    for (int64_t length = 1; length <= 12; ++length) {
      INFO("binomial(" << s << ") over " << length << " steps");
      const double repeated = model_of(scan_schedules::binomial(s), length).recompute_flops / step;
      CHECK(repeated == double(binomial_extra_steps(length, s) - (length - 1)));
    }
  // Griewank's formula at a few points: r·L - C(s + r, s - 1).
  CHECK(binomial_repetitions(100, 4) == 5);  // C(8, 4) = 70 < 100 <= C(9, 4) = 126
  CHECK(binomial_extra_steps(100, 4) == 5 * 100 - 126);
  CHECK(binomial_extra_steps(10, 1) == 45);  // one snapshot: L(L-1)/2
  CHECK(binomial_extra_steps(5, 4) == 4);    // every carry fits: each step once
}

TEST_CASE(
    "scan schedules: nested(k) stores about k·L^(1/k) carries, repeating each step k - 1 times") {
  const double step = step_flops();
  CHECK(model_of(scan_schedules::every_step()).residual_bytes == 100 * kCarry);
  CHECK(model_of(scan_schedules::every_step()).recompute_flops == 0);
  const memory::StepModel two = model_of(scan_schedules::nested(2));
  CHECK(two.residual_bytes == 10 * kCarry);  // the first carry of each chunk of 10
  CHECK(two.recompute_flops == 100 * step);
  const memory::StepModel three = model_of(scan_schedules::nested(3));
  CHECK(three.residual_bytes == 5 * kCarry);  // 5 chunks of 20, each 5 chunks of 4
  CHECK(three.recompute_flops == 200 * step);
  CHECK(three.peak_bytes < two.peak_bytes);
}

TEST_CASE("scan schedules: the printed programs are nested scans and remat2s") {
  const Array a = np::ones({3}), h0 = np::ones({3});
  auto text = [&](const ScanSchedule& s) {
    return to_string(
        make_jaxpr([&](const Array& x, const Array& y) { return linear_loop(x, y, s); })(a, h0));
  };
  const std::string every = text(scan_schedules::every_step());
  CHECK(every.find("length=100") != std::string::npos);
  CHECK(every.find("remat2[") != std::string::npos);
  CHECK(every.find("policy=None") != std::string::npos);
  // Ten chunks of ten steps: an outer scan of checkpointed inner scans.
  const std::string nested = text(scan_schedules::nested(2));
  CHECK(nested.find("length=10") != std::string::npos);
  CHECK(nested.find("length=100") == std::string::npos);
  // Five steps with four snapshots: four checkpointed steps, then the last one.
  const std::string few = to_string(make_jaxpr([](const Array& x, const Array& y) {
    auto step = [&](const Array& h, const std::tuple<>&) {
      return std::pair{h * x, std::tuple<>{}};
    };
    return scan(step, y, std::tuple<>{}, {.length = 5, .checkpoint = scan_schedules::binomial(4)})
        .first;
  })(a, h0));
  CHECK(few.find("length=4") != std::string::npos);
  CHECK(few.find("length=1") != std::string::npos);
}

TEST_CASE("scan schedules: memory_budget picks the least recomputation that fits") {
  CHECK(model_of(scan_schedules::memory_budget(size_t{1} << 30)).recompute_flops == 0);
  // Room for nested(2) (10 carries), not for the plain scan's 100: a schedule that recomputes,
  // and none recomputing more than binomial(4), which fits too.
  const memory::StepModel tight = model_of(scan_schedules::memory_budget(20000));
  CHECK(tight.peak_bytes <= 20000);
  CHECK(tight.recompute_flops > 0);
  CHECK(tight.recompute_flops <= model_of(scan_schedules::binomial(4)).recompute_flops);
  CHECK_THROWS_WITH(model_of(scan_schedules::memory_budget(1)),
                    Catch::Contains("no checkpoint schedule fits memory_budget(1)"));
}

TEST_CASE("scan schedules: bad schedules are refused by name") {
  const Array a = np::ones({3}), h0 = np::ones({3});
  CHECK_THROWS_WITH(linear_loop(a, h0, scan_schedules::binomial(0)),
                    Catch::Contains("binomial(0) needs at least one snapshot"));
  CHECK_THROWS_WITH(linear_loop(a, h0, scan_schedules::nested(0)),
                    Catch::Contains("nested(0) needs at least one level"));
  CHECK_THROWS_WITH(linear_loop(a, h0, scan_schedules::binomial(1)),
                    Catch::Contains("binomial(1) over 100 steps nests"));
  CHECK(parse_scan_schedule("binomial(8)") == scan_schedules::binomial(8));
  CHECK(parse_scan_schedule("nested(2)").str() == "nested(2)");
  CHECK_THROWS_WITH(parse_scan_schedule("treeverse"),
                    Catch::Contains("expected none, every_step, nested(LEVELS)"));
}

// Newton's iteration for sqrt(a), run until |x^2 - a| < 1e-12: a data-dependent trip count.
Array newton_sqrt(const Array& a, std::optional<int64_t> max_iters) {
  auto cond_fn = [&](const Array& x) { return np::max(np::abs(x * x - a)) > 1e-12; };
  auto body_fn = [&](const Array& x) { return 0.5 * (x + a / x); };
  const Array x0 = np::ones_like(a);
  return np::sum(max_iters ? while_loop(cond_fn, body_fn, x0, {.max_iters = max_iters})
                           : while_loop(cond_fn, body_fn, x0));
}

TEST_CASE("while_loop with max_iters: reverse mode through a data-dependent trip count") {
  const Array a = array(std::vector<double>{2.0, 9.0, 0.25}, Shape{3}, DType::f64);
  CHECK(newton_sqrt(a, 50).item() == newton_sqrt(a, std::nullopt).item());
  const Array g = grad([](const Array& x) { return newton_sqrt(x, 50); })(a);
  cftest::check_close(
      g, cftest::numeric_grad([](const Array& x) { return newton_sqrt(x, 50); }, a, 1e-5));
  // d sqrt(a) / da = 1 / (2 sqrt(a)).
  const std::vector<double> gv = g.to_vector<double>();
  CHECK(gv[1] == Approx(1.0 / 6.0).epsilon(1e-9));
  // Without a bound, reverse mode is refused with JAX's advice and the bound.
  CHECK_THROWS_WITH(grad([](const Array& x) { return newton_sqrt(x, std::nullopt); })(a),
                    Catch::Contains("{.max_iters = N}"));
}

}  // namespace scan_schedules_test

// print_saved_residuals and print_fwd_bwd on the tutorial's programs (gradient-checkpointing
// tutorial; real JAX outputs in jax-outputs.md §2.2-2.4 and §3.1): each residual line must equal
// JAX's up to " from ", and the location must point at this file's line and function (g).
#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cjax/api.h"
#include "passes/fwd_bwd_table.h"
#include "passes/policies.h"
#include "tests/golden/golden.h"

using namespace cjax;

namespace {

// As in the tutorial: y = jnp.dot(W, x); return jnp.sin(y).
Array g(const Array& W, const Array& x) {
  Array y = np::dot(W, x);
  return np::sin(y);
}
constexpr uint32_t kDotLine = __LINE__ - 3;
constexpr uint32_t kSinLine = __LINE__ - 3;

Array f(const Array& W1, const Array& W2, const Array& W3, const Array& x) {
  Array y = g(W1, x);
  y = g(W2, y);
  y = g(W3, y);
  return y;
}

Array f2(const Array& W1, const Array& W2, const Array& W3, const Array& x) {
  Array y = checkpoint(g)(W1, x);
  y = checkpoint(g)(W2, y);
  y = checkpoint(g)(W3, y);
  return y;
}

Array f4_body(const Array& W1, const Array& W2, const Array& W3, const Array& x) {
  Array y = checkpoint_name(g(W1, x), "a");
  y = checkpoint_name(g(W2, y), "b");
  y = checkpoint_name(g(W3, y), "c");
  return y;
}
constexpr uint32_t kNameLine = __LINE__ - 5;

const std::vector<std::string> kNames{"W1", "W2", "W3", "x"};

struct Args {
  Array W1 = np::ones({5, 4}), W2 = np::ones({6, 5}), W3 = np::ones({7, 6}), x = np::ones({4});
};

// "f32[5] output of sin from tests/frontend/x.cc:21:17 (g)" -> checks the location, returns the
// part before " from " for output lines (argument lines are returned whole).
std::vector<std::string> report(const std::vector<SavedResidual>& rs,
                                std::vector<std::string>* locations = nullptr) {
  std::vector<std::string> out;
  for (const SavedResidual& r : rs) {
    std::string line = r.aval.str_short() + " " + r.description;
    if (r.description.rfind("from ", 0) == 0) {  // arguments, constants, literals
      out.push_back(line);
      continue;
    }
    size_t from = line.find(" from ");
    out.push_back(line.substr(0, from));
    if (locations) locations->push_back(line.substr(from + 6));
  }
  return out;
}

std::string loc_suffix(uint32_t line, const std::string& code_line, char at) {
  return fmt::format(":{}:{} (g)", line, code_line.find(at) + 1);
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string captured_stdout(const std::function<void()>& fn) {
  std::ostringstream out;
  std::streambuf* old = std::cout.rdbuf(out.rdbuf());
  try {
    fn();
  } catch (...) {
    std::cout.rdbuf(old);
    throw;
  }
  std::cout.rdbuf(old);
  return out.str();
}

const std::string kSinCode = "  return np::sin(y);";
const std::string kDotCode = "  Array y = np::dot(W, x);";

}  // namespace

// jax-outputs.md §2.2
TEST_CASE("print_saved_residuals of the tutorial's f") {
  Args a;
  std::vector<std::string> locs;
  auto lines = report(saved_residuals(f, kNames)(a.W1, a.W2, a.W3, a.x), &locs);
  CHECK(lines == std::vector<std::string>{
                     "f32[5,4] from the argument W1", "f32[6,5] from the argument W2",
                     "f32[7,6] from the argument W3", "f32[4] from the argument x",
                     "f32[5] output of sin", "f32[5] output of cos", "f32[6] output of sin",
                     "f32[6] output of cos", "f32[7] output of cos"});
  REQUIRE(locs.size() == 5);
  for (const std::string& l : locs) {
    CHECK(ends_with(l, loc_suffix(kSinLine, kSinCode, '(')));
    CHECK(l.find("checkpoint_residuals_test.cc") != std::string::npos);
  }
  // The printing forms print the same lines.
  std::string printed =
      captured_stdout([&] { print_saved_residuals(f, kNames)(a.W1, a.W2, a.W3, a.x); });
  CHECK(printed == format_saved_residuals(saved_residuals(f, kNames)(a.W1, a.W2, a.W3, a.x)));
  CHECK(printed.rfind("f32[5,4] from the argument W1\n", 0) == 0);
  // Without names the arguments are named by position, as make_jaxpr names them.
  std::string unnamed = captured_stdout([&] { print_saved_residuals(f, a.W1, a.W2, a.W3, a.x); });
  CHECK(unnamed.rfind("f32[5,4] from the argument args[0]\nf32[6,5] from the argument args[1]\n",
                      0) == 0);
}

// jax-outputs.md §2.3
TEST_CASE("print_saved_residuals of f2 (checkpoint(g) at each call)") {
  Args a;
  std::vector<std::string> locs;
  auto lines = report(saved_residuals(f2, kNames)(a.W1, a.W2, a.W3, a.x), &locs);
  CHECK(lines ==
        std::vector<std::string>{"f32[5,4] from the argument W1", "f32[6,5] from the argument W2",
                                 "f32[7,6] from the argument W3", "f32[4] from the argument x",
                                 "f32[5] output of sin", "f32[6] output of sin"});
  for (const std::string& l : locs) CHECK(ends_with(l, loc_suffix(kSinLine, kSinCode, '(')));
}

// jax-outputs.md §2.4 (JAX >= 0.10.2 reports the dot_general behind the reduce_precision).
TEST_CASE("print_saved_residuals of f3 (checkpoint(f, dots_with_no_batch_dims_saveable))") {
  Args a;
  auto f3 = checkpoint(f, policies::dots_with_no_batch_dims_saveable());
  std::vector<std::string> locs;
  auto lines = report(saved_residuals(f3, kNames)(a.W1, a.W2, a.W3, a.x), &locs);
  CHECK(lines ==
        std::vector<std::string>{"f32[5,4] from the argument W1", "f32[6,5] from the argument W2",
                                 "f32[7,6] from the argument W3", "f32[4] from the argument x",
                                 "f32[5] output of dot_general", "f32[6] output of dot_general",
                                 "f32[7] output of dot_general"});
  for (const std::string& l : locs) CHECK(ends_with(l, loc_suffix(kDotLine, kDotCode, '(')));
}

// The tutorial's f4: names a, b, c; only 'a' may be saved.
TEST_CASE("print_saved_residuals of f4 (checkpoint_name + save_only_these_names)") {
  Args a;
  auto f4 = checkpoint(f4_body, policies::save_only_these_names({"a"}));
  std::vector<std::string> locs;
  auto lines = report(saved_residuals(f4, kNames)(a.W1, a.W2, a.W3, a.x), &locs);
  CHECK(lines == std::vector<std::string>{"f32[5,4] from the argument W1",
                                          "f32[6,5] from the argument W2",
                                          "f32[7,6] from the argument W3",
                                          "f32[4] from the argument x", "f32[5] named 'a'"});
  REQUIRE(locs.size() == 1);
  CHECK(locs[0].find(fmt::format(":{}:", kNameLine)) != std::string::npos);
}

TEST_CASE("saved residuals name pytree arguments by key path and report constants") {
  Array W = np::ones({3, 2});
  auto h = [&](const std::vector<Array>& xs, const Array& s) {
    return np::sin(np::dot(W, xs[0] * xs[1]) * s);
  };
  auto rs = saved_residuals(h, {"xs", "s"})(std::vector<Array>{np::ones({2}), np::ones({2})},
                                            np::ones({3}));
  auto lines = report(rs);
  CHECK(lines ==
        std::vector<std::string>{"f32[3,2] from a constant", "f32[2] from the argument xs[0]",
                                 "f32[2] from the argument xs[1]", "f32[3] from the argument s",
                                 "f32[3] output of dot_general", "f32[3] output of cos"});
}

// jax-outputs.md §3.1, source D: the forward and backward programs of vjp(f).
TEST_CASE("print_fwd_bwd of the tutorial's f") {
  Args a;
  FwdBwdPrograms p = fwd_bwd(f).programs(a.W1, a.W2, a.W3, a.x);
  CHECK(p.num_residuals == 9);
  CHECK(to_string(p.fwd) == golden::text("tutorial_f_fwd.jaxpr"));
  CHECK(to_string(p.bwd) == golden::text("tutorial_f_bwd.jaxpr"));
  std::string printed = captured_stdout([&] { print_fwd_bwd(f, a.W1, a.W2, a.W3, a.x); });
  CHECK(printed == fwd_bwd_columns(golden::text("tutorial_f_fwd.jaxpr"),
                                   golden::text("tutorial_f_bwd.jaxpr")));
  CHECK(printed.rfind("  forward computation:", 0) == 0);
  CHECK(
      fwd_bwd(f).stacked(a.W1, a.W2, a.W3, a.x) ==
      fwd_bwd_stacked(golden::text("tutorial_f_fwd.jaxpr"), golden::text("tutorial_f_bwd.jaxpr")));
}

TEST_CASE("print_fwd_bwd of f3 saves the dots and recomputes the sines") {
  Args a;
  auto f3 = checkpoint(f, policies::dots_with_no_batch_dims_saveable());
  FwdBwdPrograms p = fwd_bwd(f3).programs(a.W1, a.W2, a.W3, a.x);
  std::string fwd = to_string(p.fwd), bwd = to_string(p.bwd);
  CHECK(fwd.find("cos") == std::string::npos);  // the forward program saves no cosines
  CHECK(bwd.find("remat2[\n      differentiated=True") != std::string::npos);
  CHECK(bwd.find("policy=<function dots_with_no_batch_dims_saveable at 0xXXXXXXXXXXXX>") !=
        std::string::npos);
  CHECK(bwd.find("cos") != std::string::npos);  // recomputed in the backward program
}

// What reverse mode keeps for the backward pass, as the tutorial's tools show it:
// jax.ad_checkpoint.print_saved_residuals and the tutorial's print_fwd_bwd.
//
//   cjax::print_saved_residuals(f, {"W1", "W2", "W3", "x"})(W1, W2, W3, x);
//   cjax::print_saved_residuals(f, W1, W2, W3, x);          // arguments named args[0], ...
//   std::vector<SavedResidual> r = cjax::saved_residuals(f, {"W1", "W2", "W3", "x"})(W1, W2, W3,
//   x); cjax::print_fwd_bwd(f, W1, W2, W3, x);                  // side by side, as the tutorial
//   std::string s = cjax::fwd_bwd(f).stacked(W1, W2, W3, x);
//
// Both trace f as make_jaxpr does (argument names work the same way: `names[i]` plus each leaf's
// key path) and run the vjp passes on the jaxpr (passes/vjp.h): the residual lines come from
// passes/saved_residuals.h (`f32[5] output of sin from tests/x.cc:12:10 (g)`), the programs are
// vjp's forward and backward jaxprs. C++ numbers among the arguments are traced as weak-typed
// scalars (as vjp does); other non-Array values are static.
#pragma once

#include <iostream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cjax/autodiff_args.h"
#include "cjax/make_jaxpr.h"
#include "ir/jaxpr.h"
#include "passes/saved_residuals.h"

namespace cjax {

// vjp's forward program (primal outputs, then residuals) and backward program (residuals and
// output cotangents -> input cotangents).
struct FwdBwdPrograms {
  Jaxpr fwd, bwd;
  size_t num_residuals = 0;
  std::vector<std::string> arg_names;  // fwd's invars
};

namespace detail {

FwdBwdPrograms fwd_bwd_programs(const TracedFunction& traced);
std::vector<SavedResidual> saved_residuals_of(const FwdBwdPrograms& p);
// fwd_bwd_columns / fwd_bwd_stacked (passes/fwd_bwd_table.h) of the printed programs.
std::string render_fwd_bwd(const FwdBwdPrograms& p, bool columns);

template <class F, class... Args>
FwdBwdPrograms trace_fwd_bwd(const F& f, const std::vector<std::string>& names,
                             const Args&... args) {
  TracedFunction traced = make_jaxpr(f, names).trace(diff_arg_t<Args>(args)...);
  return fwd_bwd_programs(traced);
}

}  // namespace detail

// Traces a function for the reports; mirrors JaxprMaker (make_jaxpr.h).
template <class F>
class ResidualReporter {
 public:
  ResidualReporter(F f, std::vector<std::string> names)
      : f_(std::move(f)), names_(std::move(names)) {}

  template <class... Args>
  FwdBwdPrograms programs(const Args&... args) const {
    return detail::trace_fwd_bwd(f_, names_, args...);
  }
  // jax.ad_checkpoint.saved_residuals: one entry per residual, in JAX's order.
  template <class... Args>
  std::vector<SavedResidual> saved_residuals(const Args&... args) const {
    return detail::saved_residuals_of(programs(args...));
  }
  // The lines print_saved_residuals prints.
  template <class... Args>
  std::string residuals_text(const Args&... args) const {
    return format_saved_residuals(saved_residuals(args...));
  }
  // The forward and backward jaxprs side by side (the tutorial's rich table) or stacked.
  template <class... Args>
  std::string columns(const Args&... args) const {
    return detail::render_fwd_bwd(programs(args...), true);
  }
  template <class... Args>
  std::string stacked(const Args&... args) const {
    return detail::render_fwd_bwd(programs(args...), false);
  }

 private:
  F f_;
  std::vector<std::string> names_;
};

// A reporter with argument names; call .programs / .saved_residuals / .residuals_text / .columns
// / .stacked with the arguments.
template <class F>
ResidualReporter<std::decay_t<F>> fwd_bwd(F&& f, std::vector<std::string> arg_names = {}) {
  return ResidualReporter<std::decay_t<F>>(std::forward<F>(f), std::move(arg_names));
}

// saved_residuals(f, names)(args...): the residual list.
template <class F>
requires(!std::is_convertible_v<F, const Jaxpr&>) auto saved_residuals(
    F&& f, std::vector<std::string> arg_names) {
  auto r = fwd_bwd(std::forward<F>(f), std::move(arg_names));
  return [r](const auto&... args) { return r.saved_residuals(args...); };
}

// print_saved_residuals(f, names)(args...) and print_saved_residuals(f, args...): prints the
// residual lines to std::cout.
template <class F>
auto print_saved_residuals(F&& f, std::vector<std::string> arg_names) {
  auto r = fwd_bwd(std::forward<F>(f), std::move(arg_names));
  return [r](const auto&... args) { std::cout << r.residuals_text(args...); };
}
template <class F, class... Args>
void print_saved_residuals(F&& f, const Args&... args) {
  std::cout << fwd_bwd(std::forward<F>(f)).residuals_text(args...);
}

// The tutorial's print_fwd_bwd(f, *args): the two programs side by side on std::cout.
template <class F, class... Args>
void print_fwd_bwd(F&& f, const Args&... args) {
  std::cout << fwd_bwd(std::forward<F>(f)).columns(args...);
}

}  // namespace cjax

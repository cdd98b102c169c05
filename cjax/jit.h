// jax.jit: `cjax::jit(f)` is f staged out as one program. On concrete arrays the program runs on
// the installed back end (compiled once per argument types, then cached; see backend.h);
// inside a trace (make_jaxpr, grad, another jit) its eqns are traced inline, so jit composes
// with every transformation:
//
//   auto step = cjax::jit(cjax::value_and_grad(loss, cjax::argnums<0>));
//   auto [loss, g] = step(params, batch);
#pragma once

#include <tuple>
#include <utility>
#include <vector>

#include "cjax/autodiff_api.h"
#include "cjax/eval_jaxpr.h"

namespace cjax {

template <class F>
class Jitted {
 public:
  explicit Jitted(F f) : f_(std::move(f)) {}

  template <class... Args>
  auto operator()(const Args&... args) const {
    auto call = detail::to_diff_args(std::make_tuple(args...));
    detail::FlatArgs fa = detail::flatten_tuple(call, std::vector<bool>(sizeof...(Args), true));
    auto traced = detail::trace_call(f_, call, fa, "jit");
    return tree_unflatten(traced.proto, eval_jaxpr(traced.closed, fa.primals));
  }

 private:
  F f_;
};

template <class F>
Jitted<F> jit(F f) {
  return Jitted<F>(std::move(f));
}

}  // namespace cjax

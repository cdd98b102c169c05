// jax.jit: `cjax::jit(f)` is f staged out as one program. On concrete arrays it is traced once
// per call signature (the arguments' tree structures with their static values, every leaf's
// shape, dtype and weak type: cjax/jit_cache.h) and the program runs on the installed back end,
// compiled on the first call with that signature; later calls run the compiled program with no
// tracing. Inside a trace (make_jaxpr, grad, another jit) its eqns are traced inline, so jit
// composes with every transformation:
//
//   auto step = cjax::jit(cjax::value_and_grad(loss, cjax::argnums<0>));
//   auto [loss, g] = step(params, batch);   // traces and compiles
//   auto [loss2, g2] = step(params, batch); // runs the executable
//
// As in JAX, values f captures (rather than takes as arguments) are read when f is traced.
// CJAX_LOG_COMPILES=1 reports each trace and each compile on standard error.
#pragma once

#include <memory>
#include <tuple>
#include <typeinfo>
#include <utility>
#include <vector>

#include "cjax/autodiff_api.h"
#include "cjax/eval_jaxpr.h"
#include "cjax/jit_cache.h"

namespace cjax {

template <class F>
class Jitted {
 public:
  explicit Jitted(F f) : f_(std::move(f)), cache_(std::make_shared<detail::JitCache>()) {}

  template <class... Args>
  auto operator()(const Args&... args) const {
    auto call = detail::to_diff_args(std::make_tuple(args...));
    using Call = decltype(call);
    detail::FlatArgs fa = detail::flatten_tuple(call, std::vector<bool>(sizeof...(Args), true));
    if (is_tracing()) {
      auto traced = detail::trace_call(f_, call, fa, "jit");
      return tree_unflatten(traced.proto, eval_jaxpr(traced.closed, fa.primals));
    }
    using R = detail::apply_result_t<F, Call>;
    const std::string key = detail::trace_cache_key(fa.trees, typeid(Call).name(), "jit");
    std::shared_ptr<detail::JitEntry> entry = cache_->find(key);
    if (!entry) {
      detail::log_jit_trace(fa.primals);
      auto traced = detail::trace_call(f_, call, fa, "jit");
      auto fresh = std::make_shared<detail::JitEntry>();
      fresh->closed = std::move(traced.closed);
      fresh->out_proto = std::move(traced.proto);
      entry = cache_->insert(key, std::move(fresh));
    }
    return tree_unflatten(std::any_cast<const R&>(entry->out_proto),
                          detail::run_jit_entry(*entry, fa.primals));
  }

  // How many call signatures have been traced (each traced once), for tests and logs.
  size_t cache_size() const { return cache_->size(); }

 private:
  F f_;
  std::shared_ptr<detail::JitCache> cache_;
};

template <class F>
Jitted<F> jit(F f) {
  return Jitted<F>(std::move(f));
}

}  // namespace cjax

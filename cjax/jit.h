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
// CJAX_LOG_COMPILES=1 reports each trace and each compile on standard error. With
// `cjax::jit(f, cjax::donate_argnums(0))` a call consumes argument 0's buffers (see jit below).
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "cjax/autodiff_api.h"
#include "cjax/eval_jaxpr.h"
#include "cjax/jit_cache.h"
#include "ir/errors.h"

namespace cjax {

// jit's donate_argnums: the positional arguments whose buffers a call may consume.
struct DonateArgnums {
  std::vector<int> argnums;
};
// `cjax::jit(step, cjax::donate_argnums(0, 1))`, as `jax.jit(step, donate_argnums=(0, 1))`.
template <class... I>
requires(std::is_integral_v<I>&&...) DonateArgnums donate_argnums(I... i) {
  return {{static_cast<int>(i)...}};
}

template <class F>
class Jitted {
 public:
  explicit Jitted(F f, DonateArgnums donate = {})
      : f_(std::move(f)),
        donate_(std::move(donate.argnums)),
        cache_(std::make_shared<detail::JitCache>()) {}

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
      detail::log_trace("jit: tracing", fa.primals);
      auto traced = detail::trace_call(f_, call, fa, "jit");
      auto fresh = std::make_shared<detail::JitEntry>();
      fresh->closed = std::move(traced.closed);
      fresh->out_proto = std::move(traced.proto);
      entry = cache_->insert(key, std::move(fresh));
    }
    return tree_unflatten(std::any_cast<const R&>(entry->out_proto),
                          detail::run_jit_entry(*entry, fa.primals, donated_leaves(fa)));
  }

  // How many call signatures have been traced (each traced once), for tests and logs.
  size_t cache_size() const { return cache_->size(); }

 private:
  // Which leaves belong to donated arguments (empty when none is).
  std::vector<bool> donated_leaves(const detail::FlatArgs& fa) const {
    if (donate_.empty()) return {};
    std::vector<bool> leaves(fa.primals.size(), false);
    for (int k : donate_) {
      if (k < 0 || static_cast<size_t>(k) >= fa.trees.size())
        throw UsageError(fmt::format("jit: donate_argnums names argument {}, but the call has {}",
                                     k, fa.trees.size()));
      const auto i = static_cast<size_t>(k);
      std::fill_n(leaves.begin() + static_cast<std::ptrdiff_t>(fa.offset[i]), fa.num_leaves[i],
                  true);
    }
    return leaves;
  }

  F f_;
  std::vector<int> donate_;
  std::shared_ptr<detail::JitCache> cache_;
};

// As jax.jit(f), or jax.jit(f, donate_argnums=...): on concrete arrays the donated arguments'
// buffers go to the call, which frees each once it has read it last (a training step's old
// weights, say, are gone before its last layers run) and the Arrays are deleted (is_deleted();
// reading one throws). Inside a trace, jit is inlined and donation does nothing, as in JAX.
// Donating an Array that another thread reads at the same time is a race.
template <class F>
Jitted<F> jit(F f, DonateArgnums donate = {}) {
  return Jitted<F>(std::move(f), std::move(donate));
}

}  // namespace cjax

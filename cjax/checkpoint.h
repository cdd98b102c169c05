// jax.checkpoint (alias remat) and jax.ad_checkpoint.checkpoint_name.
//
//   auto f3 = cjax::checkpoint(f, cjax::policies::dots_with_no_batch_dims_saveable());
//   Array y = f3(W1, W2, W3, x);         // binds one remat2 eqn (or evaluates it eagerly)
//   x = cjax::checkpoint_name(g(W1, x), "a");
//
// A checkpointed function traces `f` once per (argument structure, static values, avals) and
// caches the jaxpr; each call binds `remat2[differentiated=False jaxpr=... policy=...
// prevent_cse=...]` on the captured constants followed by the arguments' Array leaves. Non-Array
// arguments (numbers, bools, strings, enums, anywhere in the pytrees) are static, as with JAX's
// static_argnums: they are passed to `f` as they are and are part of the cache key, so
// `checkpoint(f)(x, /*is_training=*/true)` may branch on them. Differentiating the remat2 eqn
// (grad, vjp) applies the policy: see passes/remat.h.
#pragma once

#include <any>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <source_location>
#include <string>
#include <tuple>
#include <typeinfo>
#include <utility>
#include <vector>

#include "cjax/bind.h"
#include "cjax/jit_cache.h"
#include "cjax/make_jaxpr.h"
#include "cjax/pytree.h"
#include "ir/jaxpr.h"
#include "ir/policy.h"
#include "ir/source_info.h"
#include "passes/policies.h"  // cjax::policies, JAX's jax.checkpoint_policies

namespace cjax {

namespace detail {

// A traced checkpoint body: the jaxpr with its captured constants turned into leading invars,
// and the policy its remat2 eqn carries (a memory budget planned for this body, once per trace).
struct RematTrace {
  JaxprRef jaxpr;
  std::vector<Array> consts;  // values of the leading invars
  std::any out_proto;         // f's result, a prototype for tree_unflatten
  PolicyRef policy;
};

// Trace cache of one checkpointed function. Entries whose constants are all concrete are kept
// (a trace that captured tracers of an enclosing trace is only valid inside it).
class RematCache {
 public:
  std::optional<RematTrace> find(const std::string& key) const;
  void insert(const std::string& key, const RematTrace& t);
  size_t size() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, RematTrace> entries_;
};

// Turns a traced function into a RematTrace (constvars become leading invars); a memory budget
// is planned for it here (passes/memory/budget_plan.h).
RematTrace make_remat_trace(TracedFunction traced, std::any out_proto, const PolicyRef& policy);

// Binds the remat2 eqn; returns its outputs.
std::vector<Array> bind_remat(const RematTrace& t, const std::vector<FlatTree>& flat,
                              bool prevent_cse, const SourceInfo& src);

}  // namespace detail

template <class F>
class Checkpointed {
 public:
  Checkpointed(F f, PolicyRef policy, bool prevent_cse, SourceInfo src)
      : f_(std::move(f)),
        policy_(std::move(policy)),
        prevent_cse_(prevent_cse),
        src_(src),
        cache_(std::make_shared<detail::RematCache>()) {}

  template <class... Args>
  auto operator()(const Args&... args) const {
    using Call = std::tuple<detail::traced_arg_t<Args>...>;
    using R = std::decay_t<std::invoke_result_t<const F&, const detail::traced_arg_t<Args>&...>>;
    Call call(args...);
    std::vector<FlatTree> flat;
    std::apply([&](const auto&... a) { (flat.push_back(tree_flatten(a)), ...); }, call);
    std::string key = detail::trace_cache_key(flat, typeid(Call).name(), "checkpoint");
    std::optional<detail::RematTrace> t = cache_->find(key);
    if (!t) {
      std::optional<R> proto;
      std::vector<size_t> offsets{0};
      for (const FlatTree& ft : flat) offsets.push_back(offsets.back() + ft.leaves.size());
      auto body = [&](std::span<const Array> tracers) -> FlatTree {
        Call rebuilt = rebuild(call, tracers, offsets, std::index_sequence_for<Args...>{});
        R r = std::apply(f_, rebuilt);
        FlatTree out = tree_flatten(r);
        proto.emplace(std::move(r));
        return out;
      };
      // Trace first: `body` sets `proto` (function arguments are evaluated in no fixed order).
      TracedFunction traced = detail::trace_flat(flat, {}, "checkpoint", body);
      t = detail::make_remat_trace(std::move(traced), std::any(std::move(*proto)), policy_);
      cache_->insert(key, *t);
    }
    std::vector<Array> outs = detail::bind_remat(*t, flat, prevent_cse_, src_);
    return tree_unflatten(std::any_cast<const R&>(t->out_proto), outs);
  }

  // Number of distinct traces cached so far.
  size_t cache_size() const { return cache_->size(); }

 private:
  template <class Tuple, size_t... I>
  static Tuple rebuild(const Tuple& protos, std::span<const Array> leaves,
                       const std::vector<size_t>& offsets, std::index_sequence<I...>) {
    return Tuple(tree_unflatten(std::get<I>(protos),
                                leaves.subspan(offsets[I], offsets[I + 1] - offsets[I]))...);
  }

  F f_;
  PolicyRef policy_;
  bool prevent_cse_;
  SourceInfo src_;
  std::shared_ptr<detail::RematCache> cache_;
};

// jax.checkpoint(f, policy=policy, prevent_cse=prevent_cse). A null policy is JAX's default
// (nothing saveable; printed policy=None). `src` locates the remat2 eqn.
template <class F>
Checkpointed<std::decay_t<F>> checkpoint(F&& f, PolicyRef policy = nullptr, bool prevent_cse = true,
                                         SourceInfo src = std::source_location::current()) {
  return Checkpointed<std::decay_t<F>>(std::forward<F>(f), std::move(policy), prevent_cse, src);
}
// jax.remat, an alias of checkpoint.
template <class F>
Checkpointed<std::decay_t<F>> remat(F&& f, PolicyRef policy = nullptr, bool prevent_cse = true,
                                    SourceInfo src = std::source_location::current()) {
  return checkpoint(std::forward<F>(f), std::move(policy), prevent_cse, src);
}

namespace detail {
Array checkpoint_name_leaf(const Array& x, const std::string& name, const SourceInfo& src);
}

// jax.ad_checkpoint.checkpoint_name: the identity on every Array leaf of `x`, binding
// `name[name=...]`, so that name policies (save_only_these_names, ...) can refer to the values.
template <class T>
T checkpoint_name(const T& x, const std::string& name,
                  SourceInfo src = std::source_location::current()) {
  return tree_map([&](const Array& leaf) { return detail::checkpoint_name_leaf(leaf, name, src); },
                  x);
}

}  // namespace cjax

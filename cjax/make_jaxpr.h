// make_jaxpr: traces a C++ function to a jaxpr, as jax.make_jaxpr.
//
//   auto jaxpr = cjax::make_jaxpr(f, {"W1", "W2", "W3", "x"})(W1, W2, W3, x);
//   std::cout << cjax::to_string(jaxpr);
//
// Arguments are pytrees (see pytree.h) of concrete Arrays or aval-only specs
// (`cjax::ShapeDtype{DType::f32, {5, 4}}`); every Array leaf becomes an input variable, in flatten
// order. Other arguments (numbers, strings, enums, ...) are static: passed to `f` unchanged and
// part of the structure key. Argument names are `names[i]` followed by the leaf's key path
// (`params[0]`, `opt['w']`, `p.w`); without names, `args[i]...`.
#pragma once

#include <functional>
#include <list>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "cjax/array.h"
#include "cjax/pytree.h"
#include "cjax/trace.h"
#include "ir/axis_env.h"
#include "ir/jaxpr.h"

namespace cjax {

// A traced function: the closed jaxpr plus what a cache and the transformations need.
struct TracedFunction {
  ClosedTrace closed;                  // closed.jaxpr.debug holds the names
  std::vector<std::string> arg_names;  // one per input leaf
  std::string in_structure;            // structure and static values of the arguments
  std::string out_structure;           // structure of the result
  size_t num_outputs = 0;
};

namespace detail {

// A ShapeDtype argument is traced as an Array of that aval.
template <class A>
using traced_arg_t =
    std::conditional_t<std::is_same_v<std::decay_t<A>, ShapeDtype>, Array, std::decay_t<A>>;

template <class A>
traced_arg_t<A> as_traced_arg(const A& a) {
  return traced_arg_t<A>(a);
}

// The flat argument names: names[i] (or `args[i]`) + each leaf's key path.
std::vector<std::string> flat_arg_names(const std::vector<std::string>& names,
                                        const std::vector<FlatTree>& flat_args);

// Creates the trace, calls `body` with one tracer per input leaf, finishes with the returned
// leaves. Non-template core of make_jaxpr.
TracedFunction trace_flat(const std::vector<FlatTree>& flat_args,
                          const std::vector<std::string>& names, const std::string& function_name,
                          const std::function<FlatTree(std::span<const Array>)>& body);

}  // namespace detail

template <class F>
class JaxprMaker {
 public:
  JaxprMaker(F f, std::vector<std::string> arg_names, std::string function_name)
      : f_(std::move(f)), names_(std::move(arg_names)), function_name_(std::move(function_name)) {}

  template <class... Args>
  Jaxpr operator()(const Args&... args) const {
    return trace(args...).closed.jaxpr;
  }

  // JAX's make_jaxpr(f, axis_env=[('i', 4)]): names bound while f is traced, so that its
  // collectives (cjax/collectives.h) over them trace unbatched, as under a process mesh.
  JaxprMaker axis_env(std::vector<std::pair<std::string, int64_t>> axes) const {
    JaxprMaker m = *this;
    m.axis_env_ = std::move(axes);
    return m;
  }

  template <class... Args>
  TracedFunction trace(const Args&... args) const {
    std::list<detail::AxisEnvScope> bound;
    for (const auto& [name, size] : axis_env_) bound.emplace_back(name, size);
    auto protos = std::make_tuple(detail::as_traced_arg(args)...);
    std::vector<FlatTree> flat;
    std::apply([&](const auto&... p) { (flat.push_back(tree_flatten(p)), ...); }, protos);
    std::vector<size_t> offsets{0};
    for (const FlatTree& t : flat) offsets.push_back(offsets.back() + t.leaves.size());
    auto body = [&](std::span<const Array> tracers) -> FlatTree {
      auto rebuilt = rebuild_all(protos, tracers, offsets, std::index_sequence_for<Args...>{});
      return tree_flatten(std::apply(f_, rebuilt));
    };
    return detail::trace_flat(flat, names_, function_name_, body);
  }

 private:
  template <class Tuple, size_t... I>
  static Tuple rebuild_all(const Tuple& protos, std::span<const Array> tracers,
                           const std::vector<size_t>& offsets, std::index_sequence<I...>) {
    return Tuple{tree_unflatten(std::get<I>(protos),
                                tracers.subspan(offsets[I], offsets[I + 1] - offsets[I]))...};
  }

  F f_;
  std::vector<std::string> names_;
  std::string function_name_;
  std::vector<std::pair<std::string, int64_t>> axis_env_;
};

// `arg_names` name the positional arguments (JAX takes them from the Python signature);
// `function_name` goes into the jaxpr's DebugInfo.
template <class F>
JaxprMaker<std::decay_t<F>> make_jaxpr(F&& f, std::vector<std::string> arg_names = {},
                                       std::string function_name = "") {
  return JaxprMaker<std::decay_t<F>>(std::forward<F>(f), std::move(arg_names),
                                     std::move(function_name));
}

}  // namespace cjax

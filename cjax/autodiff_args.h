// Argument plumbing shared by the autodiff API: which positional arguments are differentiated
// (argnums), how they are flattened into the leaves a function is traced on, and how results and
// cotangents are rebuilt into the user's types.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "cjax/array.h"
#include "cjax/autodiff_core.h"
#include "cjax/make_jaxpr.h"
#include "cjax/pytree.h"
#include "cjax/trace.h"
#include "ir/errors.h"

namespace cjax::detail {

// A differentiated argument: a C++ number becomes a weak-typed scalar Array (JAX's Python
// scalar), a ShapeDtype an abstract Array; pytrees stay as they are.
template <class A>
using diff_arg_t =
    std::conditional_t<std::is_arithmetic_v<std::decay_t<A>>, Array, traced_arg_t<A>>;

template <class F, class Tuple>
struct apply_result;
template <class F, class... A>
struct apply_result<F, std::tuple<A...>> {
  using type = std::decay_t<std::invoke_result_t<const F&, const A&...>>;
};
// What `f` returns when called with the elements of the tuple `Tuple`.
template <class F, class Tuple>
using apply_result_t = typename apply_result<F, Tuple>::type;

// The arguments of one call, flattened. Leaves of the differentiated arguments become the traced
// function's inputs (in order); the other arguments are passed to the function as they are, so
// their Arrays are captured as constants of the trace (as JAX's argnums_partial closes over them).
struct FlatArgs {
  std::vector<FlatTree> trees;     // one per positional argument
  std::vector<bool> diff;          // per positional argument
  std::vector<size_t> offset;      // per positional argument: its first leaf among `primals`
  std::vector<size_t> num_leaves;  // per positional argument
  std::vector<Array> primals;      // the leaves of the differentiated arguments

  // Drops the argument values (a linearized or vjp function keeps its residuals, not the
  // primals); the counts stay.
  void forget_values();
};
FlatArgs flatten_args(std::vector<FlatTree> trees, std::vector<bool> diff);

template <class T>
T rebuild_arg(const T& proto, const FlatArgs& fa, size_t i, std::span<const Array> leaves) {
  if (!fa.diff[i]) return proto;
  return tree_unflatten(proto, leaves.subspan(fa.offset[i], fa.num_leaves[i]));
}

// A copy of `args` whose differentiated arguments take their leaves from `leaves`.
template <class... A, size_t... I>
std::tuple<A...> rebuild_args(const std::tuple<A...>& args, const FlatArgs& fa,
                              std::span<const Array> leaves, std::index_sequence<I...>) {
  return std::tuple<A...>(rebuild_arg(std::get<I>(args), fa, I, leaves)...);
}
template <class... A>
std::tuple<A...> rebuild_args(const std::tuple<A...>& args, const FlatArgs& fa,
                              std::span<const Array> leaves) {
  return rebuild_args(args, fa, leaves, std::index_sequence_for<A...>{});
}

// `args` with every Array leaf of a differentiated argument replaced by an abstract Array of its
// aval: a prototype to rebuild cotangents into that holds no values.
template <class... A>
std::tuple<A...> without_values(const std::tuple<A...>& args, const FlatArgs& fa) {
  std::vector<Array> abstract;
  for (const Array& x : fa.primals) abstract.push_back(Array::abstract(x.aval()));
  return rebuild_args(args, fa, abstract);
}

template <class... A>
FlatArgs flatten_tuple(const std::tuple<A...>& args, std::vector<bool> diff) {
  std::vector<FlatTree> trees;
  std::apply([&](const auto&... a) { (trees.push_back(tree_flatten(a)), ...); }, args);
  return flatten_args(std::move(trees), std::move(diff));
}

// `f` traced on the differentiated leaves of `args`, and what it returned (with tracer leaves:
// a prototype for tree_unflatten).
template <class F, class... A>
struct TracedCall {
  ClosedTrace closed;
  apply_result_t<F, std::tuple<A...>> proto;
};

template <class F, class... A>
TracedCall<F, A...> trace_call(const F& f, const std::tuple<A...>& args, const FlatArgs& fa,
                               const std::string& api) {
  using R = apply_result_t<F, std::tuple<A...>>;
  std::vector<FlatTree> diff_trees;
  for (size_t i = 0; i < fa.trees.size(); ++i)
    if (fa.diff[i]) diff_trees.push_back(fa.trees[i]);
  std::optional<R> proto;
  auto body = [&](std::span<const Array> tracers) -> FlatTree {
    std::tuple<A...> rebuilt = rebuild_args(args, fa, tracers);
    R r = std::apply(f, rebuilt);
    FlatTree t = tree_flatten(r);
    proto.emplace(std::move(r));
    return t;
  };
  TracedFunction t = trace_flat(diff_trees, {}, api, body);
  return TracedCall<F, A...>{std::move(t.closed), std::move(*proto)};
}

// ---- argnums ------------------------------------------------------------------------------

// Runtime argnums: one index (the gradient has that argument's type) or a list (a std::vector of
// gradients). Both need every positional argument to have one type.
struct ArgnumIndex {
  int index;
};
struct ArgnumList {
  std::vector<int> indices;
};

// Checks and normalizes (negative = from the end) an argument number.
size_t normalize_argnum(std::string_view api, int argnum, size_t num_args);

template <int... I>
constexpr bool contains_index(size_t k) {
  return ((static_cast<size_t>(I) == k) || ...);
}

template <class Sel, class... A>
struct Selection;

// Compile-time argnums: differentiated positions take diff_arg_t, others keep their type (C++
// numbers and other non-Array values stay static).
template <int... I, class... A>
struct Selection<Argnums<I...>, A...> {
  static_assert(sizeof...(I) > 0, "argnums: select at least one argument");
  static_assert(((I >= 0 && static_cast<size_t>(I) < sizeof...(A)) && ...),
                "argnums: an argument number is out of range for this call");

  template <class Seq>
  struct call_tuple;
  template <size_t... K>
  struct call_tuple<std::index_sequence<K...>> {
    using type =
        std::tuple<std::conditional_t<contains_index<I...>(K), diff_arg_t<A>, traced_arg_t<A>>...>;
  };
  using Call = typename call_tuple<std::index_sequence_for<A...>>::type;

  static Call convert(const Argnums<I...>&, const A&... a) { return Call(a...); }
  static std::vector<bool> mask(std::string_view, const Argnums<I...>&) {
    std::vector<bool> m(sizeof...(A), false);
    ((m[static_cast<size_t>(I)] = true), ...);
    return m;
  }
  static auto pick(const Argnums<I...>&, const Call& grads) {
    if constexpr (sizeof...(I) == 1)
      return std::get<static_cast<size_t>(I)...>(grads);
    else
      return std::make_tuple(std::get<static_cast<size_t>(I)>(grads)...);
  }
};

template <class A0, class... A>
struct Homogeneous {
  using type = diff_arg_t<A0>;
  static constexpr bool value = (std::is_same_v<diff_arg_t<A>, type> && ...);
};

template <class... A>
struct RuntimeSelection {
  static_assert(sizeof...(A) > 0, "argnums: the function takes no arguments");
  static_assert(Homogeneous<A...>::value,
                "runtime argnums (an int or a list) need all positional arguments to have one "
                "type; use cjax::argnums<I...> to select arguments of different types");
  using Elem = typename Homogeneous<A...>::type;
  using Call = std::tuple<diff_arg_t<A>...>;
  static Call convert(const A&... a) { return Call(a...); }
  static std::vector<Elem> all(const Call& grads) {
    return std::apply([](const auto&... g) { return std::vector<Elem>{g...}; }, grads);
  }
};

template <class... A>
struct Selection<ArgnumIndex, A...> : RuntimeSelection<A...> {
  using Base = RuntimeSelection<A...>;
  using typename Base::Call;
  static Call convert(const ArgnumIndex&, const A&... a) { return Base::convert(a...); }
  static std::vector<bool> mask(std::string_view api, const ArgnumIndex& s) {
    std::vector<bool> m(sizeof...(A), false);
    m[normalize_argnum(api, s.index, sizeof...(A))] = true;
    return m;
  }
  static auto pick(const ArgnumIndex& s, const Call& grads) {
    return Base::all(grads)[normalize_argnum("argnums", s.index, sizeof...(A))];
  }
};

template <class... A>
struct Selection<ArgnumList, A...> : RuntimeSelection<A...> {
  using Base = RuntimeSelection<A...>;
  using typename Base::Call;
  static Call convert(const ArgnumList&, const A&... a) { return Base::convert(a...); }
  static std::vector<bool> mask(std::string_view api, const ArgnumList& s) {
    if (s.indices.empty()) throw UsageError(std::string(api) + ": argnums is empty");
    std::vector<bool> m(sizeof...(A), false);
    for (int i : s.indices) m[normalize_argnum(api, i, sizeof...(A))] = true;
    return m;
  }
  static auto pick(const ArgnumList& s, const Call& grads) {
    std::vector<typename Base::Elem> all = Base::all(grads), out;
    for (int i : s.indices) out.push_back(all[normalize_argnum("argnums", i, sizeof...(A))]);
    return out;
  }
};

}  // namespace cjax::detail

// Control flow: lax.scan, lax.cond / lax.switch, lax.while_loop and lax.fori_loop.
//
//   auto [x, ys] = cjax::scan(layer, x0, std::pair{all_weights, all_biases});
//   Array y = cjax::cond(pred, [](Array x) { return x * 2; }, [](Array x) { return -x; }, x);
//   Array z = cjax::while_loop(cond_fn, body_fn, init);
//   Array w = cjax::while_loop(cond_fn, body_fn, init, {.max_iters = 50});  // reverse-mode too
//   auto [h, hs] = cjax::scan(step, h0, xs, {.checkpoint = cjax::scan_schedules::binomial(8)});
//   Array s = cjax::fori_loop(0, 10, [](Array i, Array acc) { return acc + i; }, init);
//
// Each traces its functions once (in a new innermost trace) and binds one `scan`, `cond` or
// `while` eqn whose jaxprs take their captured constants as leading operands (the body's
// `num_consts` / the branches' common leading operands / `cond_nconsts`, `body_nconsts`). Outside
// a trace the eqn is evaluated at once by the interpreter. Carries and operands are pytrees (see
// pytree.h). A weakly typed initial carry (a C++ number) whose new value is strongly typed is
// promoted and the body retraced, as JAX does.
#pragma once

#include <any>
#include <cstdint>
#include <functional>
#include <optional>
#include <source_location>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "cjax/array.h"
#include "cjax/pytree.h"
#include "ir/source_info.h"
#include "passes/scan_schedules.h"  // cjax::scan_schedules: checkpoint schedules for long loops

namespace cjax {

// An Array argument that records where the call was written (the location of the eqn).
struct LocatedArray {
  template <class T>
  requires std::is_constructible_v<Array, const T&> LocatedArray(  // NOLINT: implicit on purpose
      const T& v, SourceInfo s = std::source_location::current())
      : value(v), src(s) {}
  Array value;
  SourceInfo src;
};

namespace detail {

// A flat body: given one tracer per input leaf, returns the output leaves and records the
// output structure.
using FlatBody = std::function<std::vector<Array>(std::span<const Array>)>;

// scan over flat leaves: `body` maps (carry..., x slices...) to (carry..., y slices...);
// `num_carry` is the number of carry leaves. Returns the final carry leaves and the stacked ys.
// With a `schedule` other than none, the traced scan is rewritten by schedule_scan
// (passes/scan_schedules.h) and its eqns are bound instead.
std::vector<Array> scan_flat(const FlatBody& body, std::vector<Array> init,
                             const std::vector<Array>& xs, std::optional<int64_t> length,
                             bool reverse, const SourceInfo& src,
                             const ScanSchedule& schedule = {});
// cond / switch over flat operands; `index` is an int32 (or bool) scalar already converted.
std::vector<Array> cond_flat(const std::vector<FlatBody>& branches, const Array& index,
                             const std::vector<Array>& operands, const SourceInfo& src);
// JAX's index conversions: a bool (or number) predicate to int32 0/1, or an integer index
// converted to int32 and clamped into [0, n-1].
Array cond_index(const Array& pred, const SourceInfo& src);
Array switch_index(const Array& index, size_t num_branches, const SourceInfo& src);
// while over flat carry leaves.
std::vector<Array> while_flat(const FlatBody& cond, const FlatBody& body, std::vector<Array> init,
                              const SourceInfo& src);
// fori_loop's index arithmetic: i + 1 and i < upper.
Array add_one(const Array& i, const SourceInfo& src);
Array less(const Array& x, const Array& y, const SourceInfo& src);

template <class T>
struct is_pair_like : std::false_type {};
template <class A, class B>
struct is_pair_like<std::pair<A, B>> : std::true_type {};
template <class A, class B>
struct is_pair_like<std::tuple<A, B>> : std::true_type {};

template <class Proto>
std::vector<Array> leaves_of(const Proto& x, const std::string& expected_structure,
                             const char* what) {
  FlatTree t = tree_flatten(x);
  if (t.structure != expected_structure)
    throw TypeError(std::string(what) + ": the structure of the result does not match: " +
                    t.structure + " vs " + expected_structure);
  return t.leaves;
}

}  // namespace detail

// scan's options beyond JAX's positional ones: `checkpoint`, how reverse mode trades the carries
// it stores for recomputation (passes/scan_schedules.h):
//   cjax::scan(step, x0, xs, {.checkpoint = cjax::scan_schedules::binomial(8)});
struct ScanOptions {
  std::optional<int64_t> length = std::nullopt;
  bool reverse = false;
  ScanSchedule checkpoint = {};
};

// lax.scan(f, init, xs, length, reverse): `f(carry, x)` returns a pair (new carry, y) where the
// carry has init's structure and types and x is one slice of xs (its leaves without their leading
// dimension). Returns (final carry, ys stacked along a new leading dimension). `xs` may be an
// empty pytree (`std::tuple<>{}`) when `length` is given. With `reverse` the slices are visited
// last to first (ys[t] still belongs to xs[t]).
template <class F, class Carry, class Xs>
auto scan(F&& f, const Carry& init, const Xs& xs, const ScanOptions& options,
          SourceInfo src = std::source_location::current()) {
  using R = std::decay_t<std::invoke_result_t<F&, const Carry&, const Xs&>>;
  static_assert(detail::is_pair_like<R>::value, "scan: f must return a pair (carry, y)");
  using Y = std::decay_t<std::tuple_element_t<1, R>>;
  FlatTree init_flat = tree_flatten(init);
  FlatTree xs_flat = tree_flatten(xs);
  const size_t nk = init_flat.leaves.size();
  std::optional<Y> y_proto;
  detail::FlatBody body = [&](std::span<const Array> in) {
    Carry c = tree_unflatten(init, in.first(nk));
    Xs x = tree_unflatten(xs, in.subspan(nk));
    R r = f(c, x);
    std::vector<Array> out =
        detail::leaves_of(std::get<0>(r), init_flat.structure, "scan: the carry returned by f");
    FlatTree y = tree_flatten(std::get<1>(r));
    out.insert(out.end(), y.leaves.begin(), y.leaves.end());
    y_proto.emplace(std::get<1>(r));
    return out;
  };
  std::vector<Array> outs =
      detail::scan_flat(body, init_flat.leaves, xs_flat.leaves, options.length, options.reverse,
                        src, options.checkpoint);
  std::span<const Array> all(outs);
  return std::pair<Carry, Y>(tree_unflatten(init, all.first(nk)),
                             tree_unflatten(*y_proto, all.subspan(nk)));
}

template <class F, class Carry, class Xs>
auto scan(F&& f, const Carry& init, const Xs& xs, std::optional<int64_t> length = std::nullopt,
          bool reverse = false, SourceInfo src = std::source_location::current()) {
  return scan(std::forward<F>(f), init, xs, ScanOptions{.length = length, .reverse = reverse}, src);
}

namespace detail {

// cond over already converted index: branches[index](operands...).
template <class F, class... Ops>
auto cond_impl(const Array& index, const SourceInfo& src, const std::vector<F>& branches,
               const Ops&... operands) {
  using R = std::decay_t<std::invoke_result_t<const F&, const Ops&...>>;
  std::tuple<Ops...> ops(operands...);
  FlatTree flat = tree_flatten(ops);
  std::optional<R> proto;
  std::string out_structure;
  std::vector<FlatBody> bodies;
  for (size_t k = 0; k < branches.size(); ++k) {
    bodies.push_back([&, k](std::span<const Array> in) {
      std::tuple<Ops...> rebuilt = tree_unflatten(ops, in);
      R r = std::apply(branches[k], rebuilt);
      FlatTree t = tree_flatten(r);
      if (!proto) {
        out_structure = t.structure;
        proto.emplace(std::move(r));
      } else if (t.structure != out_structure) {
        throw TypeError("cond: branch " + std::to_string(k) +
                        " returns a different structure than branch 0: " + t.structure + " vs " +
                        out_structure);
      }
      return t.leaves;
    });
  }
  std::vector<Array> outs = cond_flat(bodies, index, flat.leaves, src);
  return tree_unflatten(*proto, outs);
}

}  // namespace detail

// lax.switch(index, branches, *operands): runs branches[clamp(index, 0, n-1)](operands...). Every
// branch returns the same structure and types.
template <class F, class... Ops>
auto switch_(LocatedArray index, const std::vector<F>& branches, const Ops&... operands) {
  if (branches.empty()) throw UsageError("switch: needs at least one branch");
  Array idx = detail::switch_index(index.value, branches.size(), index.src);
  return detail::cond_impl(idx, index.src, branches, operands...);
}

// lax.cond(pred, true_fun, false_fun, *operands).
template <class TF, class FF, class... Ops>
auto cond(LocatedArray pred, TF&& true_fn, FF&& false_fn, const Ops&... operands) {
  using R = std::decay_t<std::invoke_result_t<TF&, const Ops&...>>;
  std::vector<std::function<R(const Ops&...)>> branches{std::function<R(const Ops&...)>(false_fn),
                                                        std::function<R(const Ops&...)>(true_fn)};
  Array idx = detail::cond_index(pred.value, pred.src);
  return detail::cond_impl(idx, pred.src, branches, operands...);
}

// lax.while_loop(cond_fun, body_fun, init_val): while cond_fn(carry): carry = body_fn(carry).
// Forward-mode differentiable; reverse mode fails (the trip count is dynamic): use scan or
// fori_loop with static bounds.
template <class CF, class BF, class T>
T while_loop(CF&& cond_fn, BF&& body_fn, const T& init,
             SourceInfo src = std::source_location::current()) {
  FlatTree flat = tree_flatten(init);
  detail::FlatBody c = [&](std::span<const Array> in) {
    return std::vector<Array>{Array(cond_fn(tree_unflatten(init, in)))};
  };
  detail::FlatBody b = [&](std::span<const Array> in) {
    return detail::leaves_of(T(body_fn(tree_unflatten(init, in))), flat.structure,
                             "while_loop: the carry returned by body_fn");
  };
  return tree_unflatten(init, detail::while_flat(c, b, flat.leaves, src));
}

// A bound that makes while_loop reverse-differentiable: the loop becomes a scan of `max_iters`
// steps, each running body_fn under cond(cond_fn(carry), body_fn, identity), so that a carry for
// which cond_fn is false passes through the remaining steps unchanged, and those steps transpose
// to the identity in the backward pass. `checkpoint` schedules that scan
// (passes/scan_schedules.h).
// A loop still running after max_iters steps stops there: test cond_fn on the result to know.
struct WhileOptions {
  std::optional<int64_t> max_iters = std::nullopt;
  ScanSchedule checkpoint = {};
};

template <class CF, class BF, class T>
T while_loop(CF&& cond_fn, BF&& body_fn, const T& init, const WhileOptions& options,
             SourceInfo src = std::source_location::current()) {
  if (!options.max_iters) {
    if (options.checkpoint.kind != ScanSchedule::Kind::none)
      throw UsageError("while_loop: a checkpoint schedule needs max_iters");
    return while_loop(std::forward<CF>(cond_fn), std::forward<BF>(body_fn), init, src);
  }
  if (*options.max_iters < 0)
    throw UsageError("while_loop: max_iters must not be negative, got " +
                     std::to_string(*options.max_iters));
  auto step = [&](const T& c, const std::tuple<>&) {
    T next = cond(
        LocatedArray(Array(cond_fn(c)), src), [&](const T& x) { return T(body_fn(x)); },
        [](const T& x) { return x; }, c);
    return std::pair<T, std::tuple<>>(std::move(next), {});
  };
  return scan(step, init, std::tuple<>{},
              ScanOptions{.length = *options.max_iters, .checkpoint = options.checkpoint}, src)
      .first;
}

// lax.fori_loop(lower, upper, body_fun, init_val) with static bounds: a scan of upper - lower
// steps whose carry is (i, value), so it is reverse-differentiable, as JAX's.
template <class BF, class T>
T fori_loop(int64_t lower, int64_t upper, BF&& body_fn, const T& init,
            SourceInfo src = std::source_location::current()) {
  using Carry = std::pair<Array, T>;
  Carry c0(Array::scalar(static_cast<double>(lower), DType::i32), init);
  auto step = [&](const Carry& c, const std::tuple<>&) {
    Array next_i = detail::add_one(c.first, src);
    return std::pair<Carry, std::tuple<>>(Carry(next_i, T(body_fn(c.first, c.second))), {});
  };
  int64_t n = upper > lower ? upper - lower : 0;
  return scan(step, c0, std::tuple<>{}, n, false, src).first.second;
}

// fori_loop with traced bounds: a while loop over (i, upper, value); not reverse-differentiable.
template <class BF, class T>
T fori_loop(const Array& lower, const Array& upper, BF&& body_fn, const T& init,
            SourceInfo src = std::source_location::current()) {
  using Carry = std::tuple<Array, Array, T>;
  Carry c0(lower, upper, init);
  auto cond_fn = [&](const Carry& c) { return detail::less(std::get<0>(c), std::get<1>(c), src); };
  auto body = [&](const Carry& c) {
    // i + 1 first, as JAX's (i + 1, upper, body_fun(i, x)) is traced (C++ leaves the order of
    // constructor arguments open).
    Array next_i = detail::add_one(std::get<0>(c), src);
    return Carry(std::move(next_i), std::get<1>(c), T(body_fn(std::get<0>(c), std::get<2>(c))));
  };
  return std::get<2>(while_loop(cond_fn, body, c0, src));
}

}  // namespace cjax

// The autodiff API, as JAX's: jvp, linearize, vjp, grad, value_and_grad. Each traces the user's
// function to a jaxpr (arguments and results are pytrees, see pytree.h), transforms it with the
// passes, and replays the result on the arguments with eval_jaxpr: on concrete Arrays that
// computes; inside make_jaxpr or another transformation it emits the transformed eqns into the
// enclosing trace, so transformations compose (grad(grad(f)), make_jaxpr(grad(f)), ...).
//
//   auto [y, y_dot] = cjax::jvp(f, std::make_tuple(x), std::make_tuple(t));
//   auto [y, f_jvp] = cjax::linearize(f, x);           // f_jvp(t) -> output tangents
//   auto [y, f_vjp] = cjax::vjp(f, W, x);              // f_vjp(ct) -> std::tuple(dW, dx)
//   Array dx = cjax::grad(f)(x, y);                    // d f / d x (argnums<0>)
//   auto [dx, dy] = cjax::grad(f, cjax::argnums<0, 1>)(x, y);
//   auto [loss, g] = cjax::value_and_grad(loss_fn, cjax::argnums<0>)(params, batch);
//   auto [[loss, aux], g] = cjax::value_and_grad(loss_fn, cjax::argnums<0>, cjax::has_aux)(...);
//
// argnums: `cjax::argnums<I...>` (compile time; one index gives that argument's gradient, several
// a std::tuple), or at run time an int (`grad(f, 1)`) or a list (`grad(f, {0, 1})`, a
// std::vector of gradients), which need all arguments to have one type. Arguments not selected
// are passed unchanged (their Arrays are constants of the differentiation); C++ numbers and other
// non-Array values among them are static. A selected C++ number is a weak-typed scalar Array.
// grad and value_and_grad reject selected integer and bool arguments unless given
// `cjax::allow_int` (their gradients are then zeros of their own dtype); vjp and jvp accept them
// (zero cotangents, ignored tangents), as JAX's do.
#pragma once

#include <fmt/format.h>

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "cjax/autodiff_args.h"
#include "cjax/autodiff_core.h"
#include "cjax/jit_cache.h"

namespace cjax {

namespace detail {

template <class... P>
std::tuple<diff_arg_t<P>...> to_diff_args(const std::tuple<P...>& t) {
  return std::apply([](const auto&... p) { return std::tuple<diff_arg_t<P>...>(p...); }, t);
}

// Leaves of `t`'s arguments, checked against the primals' leaf counts.
template <class... T>
std::vector<Array> leaves_like(const std::tuple<T...>& t, const FlatArgs& fa, const char* api,
                               const char* what) {
  std::vector<Array> out;
  size_t i = 0;
  std::apply(
      [&](const auto&... a) {
        (
            [&] {
              FlatTree ft = tree_flatten(a);
              if (ft.leaves.size() != fa.num_leaves[i])
                throw TypeError(fmt::format("{}: {} argument {} has {} Array leaves, its primal {}",
                                            api, what, i, ft.leaves.size(), fa.num_leaves[i]));
              out.insert(out.end(), ft.leaves.begin(), ft.leaves.end());
              ++i;
            }(),
            ...);
      },
      t);
  return out;
}

template <class R>
std::vector<Array> result_leaves(const R& r, size_t expected, const char* api, const char* what) {
  FlatTree ft = tree_flatten(r);
  if (ft.leaves.size() != expected)
    throw TypeError(fmt::format("{}: the {} has {} Array leaves, the function's output {}", api,
                                what, ft.leaves.size(), expected));
  return std::move(ft.leaves);
}

}  // namespace detail

// ---- jvp ------------------------------------------------------------------------------------

// jax.jvp: (f(*primals), the derivative of f at primals applied to tangents). `primals` and
// `tangents` are tuples of f's arguments (std::make_tuple(x, y)), of matching structure.
template <class F, class... P, class... T>
auto jvp(const F& f, const std::tuple<P...>& primals, const std::tuple<T...>& tangents) {
  static_assert(sizeof...(P) == sizeof...(T),
                "jvp: primals and tangents must have the same number of arguments");
  auto args = detail::to_diff_args(primals);
  detail::FlatArgs fa = detail::flatten_tuple(args, std::vector<bool>(sizeof...(P), true));
  std::vector<Array> tan =
      detail::leaves_like(detail::to_diff_args(tangents), fa, "jvp", "tangent");
  auto traced = detail::trace_call(f, args, fa, "jvp");
  detail::JvpValues v = detail::jvp_flat(traced.closed, fa.primals, tan);
  using R = decltype(traced.proto);
  return std::pair<R, R>(tree_unflatten(traced.proto, v.outs),
                         tree_unflatten(traced.proto, v.tangent_outs));
}
// One argument: jvp(f, x, t).
template <class F>
auto jvp(const F& f, const Array& primal, const Array& tangent) {
  return jvp(f, std::make_tuple(primal), std::make_tuple(tangent));
}

// ---- linearize -------------------------------------------------------------------------------

// The linear function jax.linearize returns: tangents of f's arguments -> output tangents.
template <class R, class... A>
class LinearizedFunction {
 public:
  LinearizedFunction(std::shared_ptr<const detail::LinearizedFlat> lin, R proto,
                     detail::FlatArgs fa)
      : lin_(std::move(lin)), proto_(std::move(proto)), fa_(std::move(fa)) {}

  template <class... T>
  R operator()(const T&... tangents) const {
    static_assert(sizeof...(T) == sizeof...(A), "linearize: one tangent per argument");
    std::vector<Array> tan = detail::leaves_like(detail::to_diff_args(std::make_tuple(tangents...)),
                                                 fa_, "linearize", "tangent");
    return tree_unflatten(proto_, lin_->apply(tan));
  }

 private:
  std::shared_ptr<const detail::LinearizedFlat> lin_;
  R proto_;
  detail::FlatArgs fa_;
};

// jax.linearize: (f(*args), f_jvp). The forward program runs now; f_jvp runs the linear program.
template <class F, class... Args>
auto linearize(const F& f, const Args&... args) {
  auto call = detail::to_diff_args(std::make_tuple(args...));
  detail::FlatArgs fa = detail::flatten_tuple(call, std::vector<bool>(sizeof...(Args), true));
  auto traced = detail::trace_call(f, call, fa, "linearize");
  auto lin = std::make_shared<const detail::LinearizedFlat>(traced.closed, fa.primals);
  using R = decltype(traced.proto);
  R out = tree_unflatten(traced.proto, lin->outs());
  fa.forget_values();  // the function keeps the residuals, not the primals
  return std::make_pair(std::move(out), LinearizedFunction<R, detail::diff_arg_t<Args>...>(
                                            lin, traced.proto, std::move(fa)));
}

// ---- vjp --------------------------------------------------------------------------------------

// The backward function jax.vjp returns: a cotangent of f's output -> a tuple with one cotangent
// per argument (of the argument's type). It holds the residuals of the forward pass.
template <class R, class Call>
class VjpFunction {
 public:
  VjpFunction(std::shared_ptr<const detail::VjpFlat> vjp, Call protos, detail::FlatArgs fa)
      : vjp_(std::move(vjp)), protos_(std::move(protos)), fa_(std::move(fa)) {}

  Call operator()(const R& cotangent) const {
    std::vector<Array> ct =
        detail::result_leaves(cotangent, vjp_->ct_avals().size(), "vjp", "cotangent");
    return detail::rebuild_args(protos_, fa_, vjp_->apply(ct));
  }
  // The values the backward pass reads (in JAX's order), as Arrays.
  const std::vector<Array>& residuals() const { return vjp_->residuals(); }

 private:
  std::shared_ptr<const detail::VjpFlat> vjp_;
  Call protos_;
  detail::FlatArgs fa_;
};

// jax.vjp: (f(*args), f_vjp).
template <class F, class... Args>
auto vjp(const F& f, const Args&... args) {
  auto call = detail::to_diff_args(std::make_tuple(args...));
  detail::FlatArgs fa = detail::flatten_tuple(call, std::vector<bool>(sizeof...(Args), true));
  auto traced = detail::trace_call(f, call, fa, "vjp");
  auto v = std::make_shared<const detail::VjpFlat>(traced.closed, fa.primals);
  using R = decltype(traced.proto);
  R out = tree_unflatten(traced.proto, v->outs());
  auto protos = detail::without_values(call, fa);
  fa.forget_values();
  return std::make_pair(std::move(out),
                        VjpFunction<R, decltype(call)>(v, std::move(protos), std::move(fa)));
}

// jax.vjp(..., has_aux=True): f returns (output, aux); returns (output, f_vjp, aux).
template <class F, class... Args>
auto vjp_with_aux(const F& f, const Args&... args) {
  auto call = detail::to_diff_args(std::make_tuple(args...));
  detail::FlatArgs fa = detail::flatten_tuple(call, std::vector<bool>(sizeof...(Args), true));
  auto traced = detail::trace_call(f, call, fa, "vjp");
  using RA = decltype(traced.proto);
  static_assert(std::tuple_size_v<RA> == 2, "vjp_with_aux: f must return a pair (output, aux)");
  using R = std::decay_t<std::tuple_element_t<0, RA>>;
  size_t n_out = tree_flatten(std::get<0>(traced.proto)).leaves.size();
  std::vector<bool> out_diff(traced.closed.jaxpr.outvars.size(), false);
  for (size_t i = 0; i < n_out; ++i) out_diff[i] = true;
  auto v = std::make_shared<const detail::VjpFlat>(traced.closed, fa.primals, out_diff);
  RA out = tree_unflatten(traced.proto, v->outs());
  auto protos = detail::without_values(call, fa);
  fa.forget_values();
  return std::make_tuple(std::get<0>(out),
                         VjpFunction<R, decltype(call)>(v, std::move(protos), std::move(fa)),
                         std::get<1>(out));
}

// ---- grad / value_and_grad ------------------------------------------------------------------

namespace detail {

// (f(*args), gradients of the selected arguments) with JAX's grad checks: the selected
// arguments' dtypes (integers and bools need AllowInt) and f's output. With `Aux`, f returns
// (value, aux) and the first result is that pair.
template <bool Aux, bool AllowInt, class F, class Sel, class... A>
auto value_and_grad_call(const F& f, const Sel& sel, const char* api, JitCache* cache,
                         const A&... a) {
  using S = Selection<Sel, A...>;
  typename S::Call call = S::convert(sel, a...);
  FlatArgs fa = flatten_tuple(call, S::mask(api, sel));
  for (const Array& x : fa.primals) check_grad_input_dtype(api, x.dtype(), AllowInt);
  auto traced = trace_call(f, call, fa, api);
  using RA = decltype(traced.proto);
  const Jaxpr& j = traced.closed.jaxpr;
  size_t n_val = j.outvars.size();
  if constexpr (Aux) {
    static_assert(std::tuple_size_v<RA> == 2, "has_aux: f must return a pair (value, aux)");
    n_val = tree_flatten(std::get<0>(traced.proto)).leaves.size();
  }
  std::optional<ShapedArray> aval;
  if (n_val == 1) aval = j.outvars[0].aval();
  check_grad_output(api, n_val, aval ? &*aval : nullptr);
  std::vector<bool> out_diff(j.outvars.size(), false);
  out_diff[0] = true;
  GradValues g = value_and_grad_flat(traced.closed, fa.primals, out_diff, cache);
  RA value = tree_unflatten(traced.proto, g.outs);
  return std::make_pair(std::move(value), S::pick(sel, rebuild_args(call, fa, g.cotangents)));
}

// On concrete arrays, f is traced on every call (so values it captures are read afresh, as JAX's
// grad reads them) and the differentiated program is cached by that trace (value_and_grad_flat):
// a repeated call neither differentiates nor compiles. jit(grad(f)) skips the tracing too.
template <class F, class Sel, bool WithValue, bool Aux, bool AllowInt>
class GradFunction {
 public:
  GradFunction(F f, Sel sel)
      : f_(std::move(f)), sel_(std::move(sel)), cache_(std::make_shared<JitCache>()) {}
  template <class... A>
  auto operator()(const A&... args) const {
    auto [value, grads] = value_and_grad_call<Aux, AllowInt>(
        f_, sel_, WithValue ? "value_and_grad" : "grad", cache_.get(), args...);
    if constexpr (WithValue)
      return std::make_pair(std::move(value), std::move(grads));
    else if constexpr (Aux)
      return std::make_pair(std::move(grads), std::get<1>(value));  // (grad, aux), as JAX
    else
      return grads;
  }

  // How many distinct traces have been differentiated on concrete arrays (each once).
  size_t cache_size() const { return cache_->size(); }

 private:
  F f_;
  Sel sel_;
  std::shared_ptr<JitCache> cache_;
};

// The options grad and value_and_grad take after argnums, in any order.
template <class O>
inline constexpr bool is_grad_option_v = std::is_same_v<O, HasAux> || std::is_same_v<O, AllowInt>;

template <bool WithValue, class F, class Sel, class... Opts>
auto make_grad(F&& f, Sel sel, Opts...) {
  constexpr bool with_aux = (std::is_same_v<Opts, HasAux> || ...);
  constexpr bool with_ints = (std::is_same_v<Opts, AllowInt> || ...);
  return GradFunction<std::decay_t<F>, Sel, WithValue, with_aux, with_ints>(std::forward<F>(f),
                                                                            std::move(sel));
}

}  // namespace detail

// jax.grad: the gradient of a function with one scalar floating point output, with respect to
// floating point arguments. The options after argnums, in any order: `cjax::has_aux` (f returns
// (value, aux); the result is (gradients, aux)) and `cjax::allow_int` (integer and bool arguments
// may be selected; see AllowInt). Calling it throws cjax::TypeError, with JAX's message, for a
// non-scalar or integer output and for a selected integer argument without allow_int.
template <class F, class... Opts>
requires(detail::is_grad_option_v<Opts>&&...) auto grad(F&& f, Opts... opts) {
  return detail::make_grad<false>(std::forward<F>(f), Argnums<0>{}, opts...);
}
template <class F, int... I, class... Opts>
requires(detail::is_grad_option_v<Opts>&&...) auto grad(F&& f, Argnums<I...> a, Opts... opts) {
  return detail::make_grad<false>(std::forward<F>(f), a, opts...);
}
template <class F, class... Opts>
requires(detail::is_grad_option_v<Opts>&&...) auto grad(F&& f, int argnum, Opts... opts) {
  return detail::make_grad<false>(std::forward<F>(f), detail::ArgnumIndex{argnum}, opts...);
}
template <class F, class... Opts>
requires(detail::is_grad_option_v<Opts>&&...) auto grad(F&& f, std::vector<int> argnums,
                                                        Opts... opts) {
  return detail::make_grad<false>(std::forward<F>(f), detail::ArgnumList{std::move(argnums)},
                                  opts...);
}

// jax.value_and_grad: (f(*args), gradients); with has_aux, ((value, aux), gradients). Takes the
// same argnums and options as grad.
template <class F, class... Opts>
requires(detail::is_grad_option_v<Opts>&&...) auto value_and_grad(F&& f, Opts... opts) {
  return detail::make_grad<true>(std::forward<F>(f), Argnums<0>{}, opts...);
}
template <class F, int... I, class... Opts>
requires(detail::is_grad_option_v<Opts>&&...) auto value_and_grad(F&& f, Argnums<I...> a,
                                                                  Opts... opts) {
  return detail::make_grad<true>(std::forward<F>(f), a, opts...);
}
template <class F, class... Opts>
requires(detail::is_grad_option_v<Opts>&&...) auto value_and_grad(F&& f, int argnum, Opts... opts) {
  return detail::make_grad<true>(std::forward<F>(f), detail::ArgnumIndex{argnum}, opts...);
}
template <class F, class... Opts>
requires(detail::is_grad_option_v<Opts>&&...) auto value_and_grad(F&& f, std::vector<int> argnums,
                                                                  Opts... opts) {
  return detail::make_grad<true>(std::forward<F>(f), detail::ArgnumList{std::move(argnums)},
                                 opts...);
}

}  // namespace cjax

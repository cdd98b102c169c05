// Jacobians and Hessians, as jax.jacfwd, jax.jacrev and jax.hessian.
//
//   Array J = cjax::jacfwd(f)(x);                 // shape f(x).shape + x.shape
//   Array J = cjax::jacrev(f, cjax::argnums<1>)(x, y);
//   Array H = cjax::hessian(f)(x);                // jacfwd(jacrev(f))
//
// As JAX's: jacfwd is a vmap of jvp over the standard basis of the inputs (the rows of an
// identity, split per input leaf), jacrev a vjp whose pullback is vmapped over the standard basis
// of the outputs, and make_jaxpr of either prints what JAX prints (docs/vmap.md). Block
// (i, j) of the Jacobian has shape out_i.shape + in_j.shape. The result's type: the argument's
// type when f returns one Array (one block per input leaf), f's output type when the argument is
// one Array (one block per output leaf), else a std::vector of the argument's type, one per
// output leaf. Inputs (and, for jacrev, outputs) must be floating point.
#pragma once

#include <memory>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "cjax/autodiff_args.h"
#include "cjax/autodiff_core.h"

namespace cjax {

namespace detail {

// blocks[i][j]: d out_i / d in_j.
using JacobianBlocks = std::vector<std::vector<Array>>;
JacobianBlocks jacfwd_flat(const ClosedTrace& f, std::span<const Array> primals);
JacobianBlocks jacrev_flat(const ClosedTrace& f, std::span<const Array> primals);

template <class R, class G>
auto assemble_jacobian(const R& out_proto, const G& arg_proto, const JacobianBlocks& blocks) {
  if constexpr (std::is_same_v<R, Array>) {
    return tree_unflatten(arg_proto, blocks.at(0));
  } else if constexpr (std::is_same_v<G, Array>) {
    std::vector<Array> column;
    for (const auto& row : blocks) column.push_back(row.at(0));
    return tree_unflatten(out_proto, column);
  } else {
    std::vector<G> out;
    for (const auto& row : blocks) out.push_back(tree_unflatten(arg_proto, row));
    return out;
  }
}

template <bool Forward, class F, class Sel>
class JacobianFunction {
 public:
  JacobianFunction(F f, Sel sel) : f_(std::move(f)), sel_(std::move(sel)) {}

  template <class... A>
  auto operator()(const A&... a) const {
    const char* api = Forward ? "jacfwd" : "jacrev";
    using S = Selection<Sel, A...>;
    typename S::Call call = S::convert(sel_, a...);
    FlatArgs fa = flatten_tuple(call, S::mask(api, sel_));
    auto traced = trace_call(f_, call, fa, api);
    JacobianBlocks blocks =
        Forward ? jacfwd_flat(traced.closed, fa.primals) : jacrev_flat(traced.closed, fa.primals);
    return assemble_jacobian(traced.proto, S::pick(sel_, call), blocks);
  }

 private:
  F f_;
  Sel sel_;
};

template <bool Forward, class F, class Sel>
auto make_jacobian(F&& f, Sel sel) {
  return JacobianFunction<Forward, std::decay_t<F>, Sel>(std::forward<F>(f), std::move(sel));
}

}  // namespace detail

// Forward-mode Jacobian with respect to one positional argument (argnums<I> or an int).
template <class F>
auto jacfwd(F&& f) {
  return detail::make_jacobian<true>(std::forward<F>(f), Argnums<0>{});
}
template <class F, int I>
auto jacfwd(F&& f, Argnums<I> a) {
  return detail::make_jacobian<true>(std::forward<F>(f), a);
}
template <class F>
auto jacfwd(F&& f, int argnum) {
  return detail::make_jacobian<true>(std::forward<F>(f), detail::ArgnumIndex{argnum});
}

// Reverse-mode Jacobian with respect to one positional argument.
template <class F>
auto jacrev(F&& f) {
  return detail::make_jacobian<false>(std::forward<F>(f), Argnums<0>{});
}
template <class F, int I>
auto jacrev(F&& f, Argnums<I> a) {
  return detail::make_jacobian<false>(std::forward<F>(f), a);
}
template <class F>
auto jacrev(F&& f, int argnum) {
  return detail::make_jacobian<false>(std::forward<F>(f), detail::ArgnumIndex{argnum});
}

// jax.hessian = jacfwd(jacrev(f)).
template <class F>
auto hessian(F&& f) {
  return jacfwd(jacrev(std::forward<F>(f)));
}
template <class F, int I>
auto hessian(F&& f, Argnums<I> a) {
  return jacfwd(jacrev(std::forward<F>(f), a), a);
}
template <class F>
auto hessian(F&& f, int argnum) {
  return jacfwd(jacrev(std::forward<F>(f), argnum), argnum);
}

}  // namespace cjax

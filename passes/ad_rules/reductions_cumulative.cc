// Autodiff rules of the cumulative reductions (jax/_src/lax/control_flow/loops.py). cumsum is
// linear (its transpose is the cumsum the other way). cumprod, cummax, cummin and cumlogsumexp
// are differentiated as JAX does it: the jvp of lax.associative_scan with the combining op (mul,
// max, min, logaddexp), which replaces the primal eqn.
//
// Two departures, both forced by primitives cjax lacks: JAX runs a reverse scan as
// rev(scan(rev(x))); while the primitive table has no `rev`, the reverse scan here is the mirror
// image of the same algorithm (pairs aligned to the end). And JAX's logaddexp is a custom_jvp
// function whose primal shows up as a custom_jvp_call eqn; here its body and jvp rule are inlined.
#include <functional>
#include <limits>

#include "ir/lax_params.h"
#include "ir/rules/registry.h"
#include "passes/ad_rules/helpers.h"
#include "passes/ad_rules/register.h"
#include "passes/primitive_rules.h"

namespace cjax {

namespace {

using namespace ad;
using namespace lax_ops;
using Combine = std::function<Dual(JaxprBuilder&, const Dual&, const Dual&)>;

int64_t dim_size(const Dual& x, int64_t axis) {
  return x.primal.aval().shape[size_t(axis)];
}

// slicing.slice_in_dim on a dual: [start, limit) with a stride along `axis`.
Dual slice_dim(JaxprBuilder& b, const Dual& x, int64_t start, int64_t limit, int64_t stride,
               int64_t axis) {
  const Shape& shape = x.primal.aval().shape;
  Shape starts(shape.size(), 0), limits = shape;
  std::vector<int64_t> strides(shape.size(), 1);
  starts[size_t(axis)] = start;
  limits[size_t(axis)] = limit;
  strides[size_t(axis)] = stride;
  return jvp_bind1(b, "slice", {x}, lax_params::slice(starts, limits, strides));
}

// `count` elements from `start`, every `stride`.
Dual slice_count(JaxprBuilder& b, const Dual& x, int64_t start, int64_t count, int64_t stride,
                 int64_t axis) {
  int64_t limit = count == 0 ? start : start + (count - 1) * stride + 1;
  return slice_dim(b, x, start, limit, stride, axis);
}

Dual pad_dim(JaxprBuilder& b, const Dual& x, PadDim d, int64_t axis) {
  size_t rank = x.primal.aval().shape.size();
  std::vector<std::vector<int64_t>> config(rank, std::vector<int64_t>{0, 0, 0});
  config[size_t(axis)] = {d.lo, d.hi, d.interior};
  Dual zero{const_like(b, x.primal, 0.0), std::nullopt};
  return jvp_bind1(b, "pad", {x, zero}, lax_params::pad(config));
}

// JAX's _interleave: `a` and `b` spread over alternate positions by interior padding and added.
Dual interleave(JaxprBuilder& b, const Dual& x, PadDim x_pad, const Dual& y, PadDim y_pad,
                int64_t axis) {
  Dual px = pad_dim(b, x, x_pad, axis);
  Dual py = pad_dim(b, y, y_pad, axis);
  std::string_view op = x.primal.aval().dtype == DType::bool_ ? "or" : "add";
  return jvp_bind1(b, op, {px, py});
}

Dual concat(JaxprBuilder& b, const Dual& x, const Dual& y, int64_t axis) {
  return jvp_bind1(b, "concatenate", {x, y}, lax_params::concatenate(axis));
}

// associative_scan's _scan: combine adjacent pairs, scan those recursively (the odd results),
// then fill in the even results.
Dual scan_forward(JaxprBuilder& b, const Combine& fn, const Dual& e, int64_t axis) {
  int64_t n = dim_size(e, axis);
  if (n < 2) return e;
  Dual lhs = slice_dim(b, e, 0, n - 1, 2, axis);
  Dual rhs = slice_dim(b, e, 1, n, 2, axis);
  Dual reduced = fn(b, lhs, rhs);
  Dual odd = scan_forward(b, fn, reduced, axis);
  int64_t m = dim_size(odd, axis);
  auto evens = [&]() -> Dual {
    if (n % 2 == 0) {
      Dual head = slice_dim(b, odd, 0, m - 1, 1, axis);
      Dual rest = slice_dim(b, e, 2, n, 2, axis);
      return fn(b, head, rest);
    }
    Dual rest = slice_dim(b, e, 2, n, 2, axis);
    return fn(b, odd, rest);
  };
  Dual combined = evens();
  Dual first = slice_dim(b, e, 0, 1, 1, axis);
  Dual even = concat(b, first, combined, axis);
  bool same = dim_size(even, axis) == m;
  return interleave(b, even, {0, same ? 1 : 0, 1}, odd, {1, same ? 0 : 1, 1}, axis);
}

// The same algorithm on the reversed sequence, written without reversing: element k of the
// result combines elements k..n-1, later ones on the left (JAX's reverse=True semantics).
Dual scan_reverse(JaxprBuilder& b, const Combine& fn, const Dual& e, int64_t axis) {
  int64_t n = dim_size(e, axis);
  if (n < 2) return e;
  int64_t m = n / 2, s = n % 2;
  Dual later = slice_count(b, e, s + 1, m, 2, axis);
  Dual earlier = slice_count(b, e, s, m, 2, axis);
  Dual reduced = fn(b, later, earlier);
  Dual odd = scan_reverse(b, fn, reduced, axis);
  auto evens = [&]() -> Dual {
    if (s == 0) {
      Dual tail = slice_dim(b, odd, 1, m, 1, axis);
      Dual rest = slice_count(b, e, 1, m - 1, 2, axis);
      return fn(b, tail, rest);
    }
    Dual rest = slice_count(b, e, 0, m, 2, axis);
    return fn(b, odd, rest);
  };
  Dual combined = evens();
  Dual last = slice_dim(b, e, n - 1, n, 1, axis);
  Dual even = concat(b, combined, last, axis);
  if (s == 0) return interleave(b, even, {1, 0, 1}, odd, {0, 1, 1}, axis);
  return interleave(b, even, {0, 0, 1}, odd, {1, 1, 1}, axis);
}

Combine binary_combine(std::string prim, Params params = {}) {
  return [prim = std::move(prim), params](JaxprBuilder& b, const Dual& x, const Dual& y) {
    return jvp_bind1(b, prim, {x, y}, params);
  };
}

// _replace_inf(x): +inf replaced by 0.
Atom replace_inf(JaxprBuilder& b, const Atom& x) {
  Atom is_inf = eq(b, x, const_like(b, x, std::numeric_limits<double>::infinity()));
  Atom zeros = full_like(b, x, 0.0);
  return select(b, is_inf, zeros, x);
}

// jnp.logaddexp and its custom jvp rule (jax/_src/lax/other.py), as JAX's JVPTrace runs it:
// zero tangents instantiated, then the primal, then the tangent.
Dual logaddexp(JaxprBuilder& b, const Dual& x, const Dual& y) {
  Atom t1 = x.tangent ? *x.tangent : zeros_like_aval(b, x.primal.aval());
  Atom t2 = y.tangent ? *y.tangent : zeros_like_aval(b, y.primal.aval());
  const Atom &x1 = x.primal, &x2 = y.primal;
  Atom amax = max(b, x1, x2);
  Atom delta = sub(b, x1, x2);
  Atom isnan = ne(b, delta, delta);
  Atom same = add(b, x1, x2);
  Atom abs_delta = abs(b, delta);
  Atom nd = neg(b, abs_delta);
  Atom e = exp(b, nd);
  Atom l = log1p(b, e);
  Atom general = add(b, amax, l);
  Atom out = select(b, isnan, same, general);
  Atom r1 = replace_inf(b, x1);
  Atom ro1 = replace_inf(b, out);
  Atom d1 = sub(b, r1, ro1);
  Atom e1 = exp(b, d1);
  Atom m1 = mul(b, t1, e1);
  Atom r2 = replace_inf(b, x2);
  Atom ro2 = replace_inf(b, out);
  Atom d2 = sub(b, r2, ro2);
  Atom e2 = exp(b, d2);
  Atom m2 = mul(b, t2, e2);
  return {out, add(b, m1, m2)};
}

JvpFullRule cumulative_jvp(Combine fn) {
  return [fn](JaxprBuilder& b, const Eqn& eqn, std::span<const Atom> primals,
              std::span<const Tangent> tangents) -> JvpFullResult {
    int64_t axis = eqn.params.get_int("axis");
    bool reverse = eqn.params.get_bool("reverse");
    Dual x{primals[0], tangents[0]};
    Dual out = x;
    if (!reverse) {
      out = scan_forward(b, fn, x, axis);
    } else if (find_primitive("rev")) {  // JAX's rev(scan(rev(x)))
      Params dims{{"dimensions", ParamValue::ints({axis})}};
      Dual r = jvp_bind1(b, "rev", {x}, dims);
      Dual s = scan_forward(b, fn, r, axis);
      out = jvp_bind1(b, "rev", {s}, dims);
    } else {
      out = scan_reverse(b, fn, x, axis);
    }
    if (!out.tangent) out.tangent = zeros_like_aval(b, out.primal.aval());
    return {{out.primal}, {out.tangent}};
  };
}

}  // namespace

void register_cumulative_ad_rules() {
  deflinear("cumsum", [](const TransposeRuleArgs& a) {
    int64_t axis = a.eqn.params.get_int("axis");
    bool reverse = a.eqn.params.get_bool("reverse");
    return std::vector<Cotangent>{cumsum(a.b, *a.cts[0], axis, !reverse)};
  });
  define_pass_rules("cumprod").jvp_full =
      cumulative_jvp(binary_combine("mul", {{"out_dtype", NoneParam{}}}));
  define_pass_rules("cummax").jvp_full = cumulative_jvp(binary_combine("max"));
  define_pass_rules("cummin").jvp_full = cumulative_jvp(binary_combine("min"));
  define_pass_rules("cumlogsumexp").jvp_full = cumulative_jvp(logaddexp);
}

}  // namespace cjax

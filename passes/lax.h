// lax-style helpers that emit one primitive each through a JaxprBuilder. Autodiff rules are
// written with these so that they read like JAX's rules (mul(g, cos(x)), ...).
#pragma once

#include <vector>

#include "passes/builder.h"

namespace cjax::lax {

// A literal of `like`'s dtype (non-weak), like JAX's `_const(x, value)`.
Atom scalar_like(const Atom& like, double value);

Atom neg(JaxprBuilder& b, const Atom& x);
Atom sin(JaxprBuilder& b, const Atom& x);
Atom cos(JaxprBuilder& b, const Atom& x);
Atom add(JaxprBuilder& b, const Atom& x, const Atom& y);
Atom add_any(JaxprBuilder& b, const Atom& x, const Atom& y);
Atom sub(JaxprBuilder& b, const Atom& x, const Atom& y);
Atom mul(JaxprBuilder& b, const Atom& x, const Atom& y);
Atom div(JaxprBuilder& b, const Atom& x, const Atom& y);
Atom square(JaxprBuilder& b, const Atom& x);
Atom unary(JaxprBuilder& b, std::string_view prim, const Atom& x);
Atom convert_element_type(JaxprBuilder& b, const Atom& x, DType t, bool weak_type = false);
// broadcast_in_dim to `shape`; a rank-0 `shape` with a rank-0 operand returns x unchanged.
Atom broadcast_in_dim(JaxprBuilder& b, const Atom& x, const Shape& shape,
                      const std::vector<int64_t>& broadcast_dimensions);
// zeros of `aval`: a literal for rank 0, else broadcast_in_dim of a 0 literal (JAX's zeros_like).
Atom zeros(JaxprBuilder& b, const ShapedArray& aval);
Atom reduce_sum(JaxprBuilder& b, const Atom& x, const std::vector<int64_t>& axes);
Atom reshape(JaxprBuilder& b, const Atom& x, const Shape& new_sizes);
// transpose; the identity permutation returns x unchanged (as lax.transpose does).
Atom transpose(JaxprBuilder& b, const Atom& x, const std::vector<int64_t>& permutation);
Atom dot_general(JaxprBuilder& b, const Atom& x, const Atom& y, const DotDimensionNumbers& dn,
                 const ParamValue& precision, const ParamValue& preferred_element_type);
Atom select_n(JaxprBuilder& b, const Atom& pred, const std::vector<Atom>& cases);

}  // namespace cjax::lax

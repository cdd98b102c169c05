// The lax library's dot_general (jax/_src/lax/lax.py).
#pragma once

#include "passes/lax/elementwise.h"

namespace cjax::lax_ops {

// dot_general with dimension numbers ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch));
// precision and preferred_element_type None unless given.
template <Emitter E>
value_t<E> dot_general(E& e, const value_t<E>& lhs, const value_t<E>& rhs,
                       const DotDimensionNumbers& dimension_numbers,
                       ParamValue preferred_element_type = NoneParam{},
                       ParamValue precision = NoneParam{}) {
  return emit1(e, "dot_general", {lhs, rhs},
               lax_params::dot_general(dimension_numbers, preferred_element_type, precision));
}

}  // namespace cjax::lax_ops

#include "cjax/nn.h"

#include <cmath>

#include "cjax/lax.h"
#include "cjax/numpy.h"
#include "cjax/numpy_util.h"

namespace cjax::nn {

Array relu(const Array& x, SourceInfo src) {
  return numpy::maximum(x, 0, src);
}

Array sigmoid(const Array& x, SourceInfo src) {
  return lax::logistic(x, src);
}

Array silu(const Array& x, SourceInfo src) {
  auto impl = [src](std::span<const Array> a) -> std::vector<Array> {
    return {numpy::multiply(a[0], sigmoid(a[0], src), src)};
  };
  Array args[] = {x};
  return numpy::detail::call_jitted("silu", impl, args, src)[0];
}

Array gelu(const Array& x, bool approximate, SourceInfo src) {
  namespace np = numpy;
  Array args[] = {x};
  Array xa = np::detail::promote_args_inexact("gelu", args, src)[0];
  if (approximate) {
    // np.sqrt(2 / np.pi).astype(x.dtype): a strongly typed scalar of x's dtype.
    Array sqrt_2_over_pi = lax::convert_element_type(std::sqrt(2.0 / M_PI), xa.dtype(), false, src);
    Array cube = np::power(xa, 3, src);
    Array inner = np::add(xa, np::multiply(0.044715, cube, src), src);
    Array cdf = np::multiply(
        0.5, np::add(1.0, np::tanh(np::multiply(sqrt_2_over_pi, inner, src), src), src), src);
    return np::multiply(xa, cdf, src);
  }
  // 0.5 * x * erfc(-x * sqrt_half), staged in Python's left-to-right order.
  Array sqrt_half = lax::convert_element_type(std::sqrt(0.5), xa.dtype(), false, src);
  Array half_x = np::multiply(0.5, xa, src);
  Array scaled = np::multiply(np::negative(xa, src), sqrt_half, src);
  Array erfc = lax::erfc(scaled, src);
  return np::multiply(half_x, erfc, src);
}

}  // namespace cjax::nn

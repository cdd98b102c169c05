// nn::layer_norm and nn::rms_norm: the normalisations of a transformer block, written as the
// numpy a JAX user writes for them (Flax's LayerNorm and RMSNorm compute the same), so their
// jaxprs are those of the hand-written forms.
#include <fmt/format.h>

#include "cjax/lax.h"
#include "cjax/nn.h"
#include "cjax/numpy.h"
#include "ir/errors.h"

namespace cjax::nn {
namespace {

// scale and bias are per feature: broadcastable against x's last axis.
void check_feature_param(const char* op, const char* what, const Array& x, const Array& p,
                         const SourceInfo& src) {
  const int64_t d = x.ndim() == 0 ? 1 : x.shape().back();
  const bool ok = p.ndim() == 0 || (p.ndim() == 1 && (p.shape()[0] == d || p.shape()[0] == 1));
  if (!ok)
    throw TypeError(
        fmt::format("{}: {} must be a scalar or a vector of x's last axis ({}), got {} "
                    "for x {} ({})",
                    op, what, d, p.aval().str_short(), x.aval().str_short(), src.summarize()));
}

void check_input(const char* op, const Array& x, double eps, const SourceInfo& src) {
  if (!is_floating(x.dtype()) || x.ndim() == 0)
    throw TypeError(fmt::format("{}: x must be a floating-point array of rank >= 1, got {} ({})",
                                op, x.aval().str_short(), src.summarize()));
  if (!(eps >= 0.0))
    throw TypeError(fmt::format("{}: epsilon must be >= 0, got {} ({})", op, eps, src.summarize()));
}

}  // namespace

Array layer_norm(const Array& x, const Array& scale, const Array& bias, double epsilon,
                 SourceInfo src) {
  check_input("layer_norm", x, epsilon, src);
  check_feature_param("layer_norm", "scale", x, scale, src);
  check_feature_param("layer_norm", "bias", x, bias, src);
  const Array centred = numpy::subtract(x, numpy::mean(x, {-1}, true, std::nullopt, src), src);
  const Array var = numpy::mean(numpy::square(centred, src), {-1}, true, std::nullopt, src);
  const Array normed =
      numpy::multiply(centred, numpy::rsqrt(numpy::add(var, epsilon, src), src), src);
  return numpy::add(numpy::multiply(normed, scale, src), bias, src);
}

Array rms_norm(const Array& x, const Array& scale, double epsilon, SourceInfo src) {
  check_input("rms_norm", x, epsilon, src);
  check_feature_param("rms_norm", "scale", x, scale, src);
  const Array ms = numpy::mean(numpy::square(x, src), {-1}, true, std::nullopt, src);
  const Array normed = numpy::multiply(x, numpy::rsqrt(numpy::add(ms, epsilon, src), src), src);
  return numpy::multiply(normed, scale, src);
}

}  // namespace cjax::nn

// A cjax plugin built in the tree for the CLI's tests: two functions registered the way a user
// registers theirs (docs/getting-started.md).
#include "cjax/cjax.h"

namespace {

namespace np = cjax::numpy;

cjax::Array mlp_loss(const cjax::Array& W1, const cjax::Array& W2, const cjax::Array& x) {
  cjax::Array h = np::tanh(np::dot(W1, x));
  return np::sum(np::sin(np::dot(W2, h)));
}

cjax::Array scale_shift(const cjax::Array& x, const cjax::Array& s) {
  return x * s + 1.0f;
}

}  // namespace

CJAX_REGISTER_FUNCTION_DESCRIBED("mlp_loss", mlp_loss, "f32[3,4], f32[2,3], f32[4]", "W1, W2, x",
                                 "a two-layer tanh/sin network summed to a scalar");
CJAX_REGISTER_FUNCTION("scale_shift", scale_shift, "f32[3], f32[]", "x, s");
// Registered with the wrong number of specs: tracing it fails with a clear error.
CJAX_REGISTER_FUNCTION("bad_specs", scale_shift, "f32[3]", "x");

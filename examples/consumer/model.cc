#include "model.h"

namespace np = cjax::numpy;

cjax::Array layer(const cjax::Array& W, const cjax::Array& x) {
  return np::tanh(np::dot(W, x));
}

cjax::Array loss(const cjax::Array& W1, const cjax::Array& W2, const cjax::Array& x,
                 const cjax::Array& y) {
  cjax::Array h = cjax::checkpoint_name(layer(W1, x), "hidden");
  return np::sum(np::power(np::dot(W2, h) - y, 2));
}

// What `cjax examples --plugin ./libmymodel.so` lists: name, function, argument specs and names.
CJAX_REGISTER_FUNCTION("loss", loss, "f32[8,4], f32[2,8], f32[4], f32[2]", "W1, W2, x, y");

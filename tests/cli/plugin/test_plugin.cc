// A cjax plugin built in the tree for the CLI's tests: functions registered the way a user
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

// A table looked up by integer ids (token ids), as a one-hot product: an id outside [0, 8)
// selects nothing. Its hidden value is named for the name policies.
cjax::Array lookup_loss(const cjax::Array& table, const cjax::Array& ids) {
  cjax::Array one_hot =
      np::equal(np::expand_dims(ids, {1}), np::arange(8)).astype(cjax::DType::f32);
  cjax::Array rows = cjax::checkpoint_name(np::dot(one_hot, table), "rows");
  return np::sum(np::sin(rows));
}

// A function of a parameter struct: a list of layers and a scale, registered with example
// arguments that hold no data. The CLI names its leaves params.layers[0].W, ..., params.scale.
struct Layer {
  cjax::Array W, b;
};
CJAX_PYTREE(Layer, W, b)
struct Params {
  std::vector<Layer> layers;
  cjax::Array scale;
};
CJAX_PYTREE(Params, layers, scale)

cjax::Array tree_loss(const Params& p, const cjax::Array& x) {
  cjax::Array h = x;
  for (const Layer& l : p.layers) h = np::tanh(np::dot(l.W, h) + l.b);
  return np::sum(h) * p.scale;
}

Params example_params() {
  using cjax::ShapeDtype;
  Params p;
  for (int i = 0; i < 2; ++i)
    p.layers.push_back({cjax::Array(ShapeDtype{cjax::DType::f32, {3, 3}}),
                        cjax::Array(ShapeDtype{cjax::DType::f32, {3}})});
  p.scale = cjax::Array(ShapeDtype{cjax::DType::f32, {}});
  return p;
}

// A step returning the parameters updated and the loss: `cjax run` names its outputs by path,
// out_0.layers[0].W ... out_0.scale, out_1.
std::tuple<Params, cjax::Array> tree_step(const Params& p, const cjax::Array& x) {
  Params next = p;
  for (Layer& l : next.layers) {
    l.W = l.W * 0.5;
    l.b = l.b + 1.0;
  }
  next.scale = p.scale * 2.0;
  return {next, tree_loss(p, x)};
}

}  // namespace

CJAX_REGISTER_FUNCTION_DESCRIBED("mlp_loss", mlp_loss, "f32[3,4], f32[2,3], f32[4]", "W1, W2, x",
                                 "a two-layer tanh/sin network summed to a scalar");
CJAX_REGISTER_FUNCTION("scale_shift", scale_shift, "f32[3], f32[]", "x, s");
CJAX_REGISTER_FUNCTION("lookup_loss", lookup_loss, "f32[8], i32[4]", "table, ids");
// Registered with the wrong number of specs: tracing it fails with a clear error.
CJAX_REGISTER_FUNCTION("bad_specs", scale_shift, "f32[3]", "x");
CJAX_REGISTER_TREE_FUNCTION_DESCRIBED(
    "tree_loss", tree_loss, "params, x", "tanh layers of a parameter struct", [] {
      return std::tuple{example_params(), cjax::ShapeDtype{cjax::DType::f32, {3}}};
    });
CJAX_REGISTER_TREE_FUNCTION("tree_step", tree_step, "params, x", [] {
  return std::tuple{example_params(), cjax::ShapeDtype{cjax::DType::f32, {3}}};
});
// Example arguments named wrongly: tracing it fails with a clear error, loading does not.
CJAX_REGISTER_TREE_FUNCTION("tree_bad_names", tree_loss, "params", [] {
  return std::tuple{example_params(), cjax::ShapeDtype{cjax::DType::f32, {3}}};
});

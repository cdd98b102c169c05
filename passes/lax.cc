#include "passes/lax.h"

#include <numeric>

#include "ir/lax_params.h"

namespace cjax::lax {

Atom scalar_like(const Atom& like, double value) { return Literal::of(value, like.aval().dtype); }

Atom unary(JaxprBuilder& b, std::string_view prim, const Atom& x) { return b.emit1(prim, {x}); }
Atom neg(JaxprBuilder& b, const Atom& x) { return b.emit1("neg", {x}); }
Atom sin(JaxprBuilder& b, const Atom& x) { return b.emit1("sin", {x}); }
Atom cos(JaxprBuilder& b, const Atom& x) { return b.emit1("cos", {x}); }
Atom square(JaxprBuilder& b, const Atom& x) { return b.emit1("square", {x}); }
Atom add(JaxprBuilder& b, const Atom& x, const Atom& y) { return b.emit1("add", {x, y}); }
Atom add_any(JaxprBuilder& b, const Atom& x, const Atom& y) { return b.emit1("add_any", {x, y}); }
Atom sub(JaxprBuilder& b, const Atom& x, const Atom& y) { return b.emit1("sub", {x, y}); }
Atom mul(JaxprBuilder& b, const Atom& x, const Atom& y) { return b.emit1("mul", {x, y}); }
Atom div(JaxprBuilder& b, const Atom& x, const Atom& y) { return b.emit1("div", {x, y}); }

Atom convert_element_type(JaxprBuilder& b, const Atom& x, DType t, bool weak_type) {
  return b.emit1("convert_element_type", {x}, lax_params::convert_element_type(t, weak_type));
}

Atom broadcast_in_dim(JaxprBuilder& b, const Atom& x, const Shape& shape,
                      const std::vector<int64_t>& broadcast_dimensions) {
  if (x.aval().shape == shape && broadcast_dimensions.size() == shape.size()) {
    bool identity = true;
    for (size_t i = 0; i < shape.size(); ++i) identity &= broadcast_dimensions[i] == int64_t(i);
    if (identity) return x;
  }
  return b.emit1("broadcast_in_dim", {x}, lax_params::broadcast_in_dim(shape, broadcast_dimensions));
}

Atom zeros(JaxprBuilder& b, const ShapedArray& aval) {
  Atom zero = Literal::of(0.0, aval.dtype);
  if (aval.shape.empty()) return zero;
  return broadcast_in_dim(b, zero, aval.shape, {});
}

Atom reduce_sum(JaxprBuilder& b, const Atom& x, const std::vector<int64_t>& axes) {
  if (axes.empty()) return x;
  return b.emit1("reduce_sum", {x}, lax_params::reduce(axes));
}

Atom reshape(JaxprBuilder& b, const Atom& x, const Shape& new_sizes) {
  if (x.aval().shape == new_sizes) return x;
  return b.emit1("reshape", {x}, lax_params::reshape(new_sizes));
}

Atom transpose(JaxprBuilder& b, const Atom& x, const std::vector<int64_t>& permutation) {
  std::vector<int64_t> identity(permutation.size());
  std::iota(identity.begin(), identity.end(), 0);
  if (permutation == identity) return x;
  return b.emit1("transpose", {x}, lax_params::transpose(permutation));
}

Atom dot_general(JaxprBuilder& b, const Atom& x, const Atom& y, const DotDimensionNumbers& dn,
                 const ParamValue& precision, const ParamValue& preferred_element_type) {
  return b.emit1("dot_general", {x, y}, lax_params::dot_general(dn, preferred_element_type, precision));
}

Atom select_n(JaxprBuilder& b, const Atom& pred, const std::vector<Atom>& cases) {
  std::vector<Atom> in{pred};
  in.insert(in.end(), cases.begin(), cases.end());
  return b.emit1("select_n", std::move(in));
}

}  // namespace cjax::lax

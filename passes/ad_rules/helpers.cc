#include "passes/ad_rules/helpers.h"

#include "ir/errors.h"

namespace cjax::ad {

namespace {

Tangent accumulate(JaxprBuilder& b, Tangent acc, const Atom& term) {
  if (!acc) return term;
  return lax::add_any(b, *acc, term);
}

}  // namespace

void defjvp(std::string_view prim, std::vector<JvpTerm> terms) {
  register_jvp_rule(prim, [terms](const JvpRuleArgs& a) {
    Tangent out;
    for (size_t i = 0; i < terms.size() && i < a.tangents.size(); ++i)
      if (terms[i] && a.tangents[i]) out = accumulate(a.b, out, terms[i](a.b, *a.tangents[i], a.primals, a.eqn));
    return std::vector<Tangent>{out};
  });
}

void defjvp2(std::string_view prim, std::vector<JvpTerm2> terms) {
  register_jvp_rule(prim, [terms](const JvpRuleArgs& a) {
    Tangent out;
    Atom ans = a.primal_outs[0];
    for (size_t i = 0; i < terms.size() && i < a.tangents.size(); ++i)
      if (terms[i] && a.tangents[i])
        out = accumulate(a.b, out, terms[i](a.b, *a.tangents[i], ans, a.primals, a.eqn));
    return std::vector<Tangent>{out};
  });
}

void defjvp_zero(std::string_view prim) {
  register_jvp_rule(prim, [](const JvpRuleArgs& a) {
    return std::vector<Tangent>(a.primal_outs.size());
  });
}

void deflinear(std::string_view prim, TransposeRule transpose) {
  register_jvp_rule(prim, [](const JvpRuleArgs& a) {
    std::vector<Atom> tangents;
    for (size_t i = 0; i < a.primals.size(); ++i) {
      const ShapedArray& p = a.primals[i].aval();
      tangents.push_back(a.tangents[i] ? *a.tangents[i]
                                       : lax::zeros(a.b, ShapedArray(p.dtype, p.shape)));
    }
    std::vector<Var> outs = a.b.emit(*a.eqn.prim, tangents, a.eqn.params);
    return std::vector<Tangent>(outs.begin(), outs.end());
  });
  register_transpose_rule(prim, std::move(transpose));
}

Atom unbroadcast(JaxprBuilder& b, const ShapedArray& aval, const Atom& x) {
  const Shape& xs = x.aval().shape;
  if (xs == aval.shape) return x;
  std::vector<int64_t> dims;
  if (aval.shape.empty()) {
    for (size_t i = 0; i < xs.size(); ++i) dims.push_back(int64_t(i));
    return lax::reduce_sum(b, x, dims);
  }
  if (xs.size() != aval.shape.size())
    throw Error("unbroadcast: rank mismatch between " + x.aval().str_short() + " and " + aval.str_short());
  for (size_t i = 0; i < xs.size(); ++i)
    if (xs[i] != aval.shape[i]) dims.push_back(int64_t(i));
  return lax::reshape(b, lax::reduce_sum(b, x, dims), aval.shape);
}

Atom maybe_broadcast(JaxprBuilder& b, const Shape& shape, const Atom& x) {
  const Shape& xs = x.aval().shape;
  if (xs == shape) return x;
  if (xs.empty()) return lax::broadcast_in_dim(b, x, shape, {});
  std::vector<int64_t> dims;
  Shape squeezed;
  for (size_t i = 0; i < xs.size(); ++i)
    if (xs[i] == shape[i]) {
      dims.push_back(int64_t(i));
      squeezed.push_back(xs[i]);
    }
  return lax::broadcast_in_dim(b, lax::reshape(b, x, squeezed), shape, dims);
}

}  // namespace cjax::ad

#include "passes/ad_rules/helpers.h"
#include "passes/primitive_rules.h"

#include <fmt/format.h>

#include <unordered_map>

namespace cjax::ad {

using namespace lax_ops;

namespace {

// JAX's functools.reduce(add_tangents, terms): add_any left to right.
Tangent sum_terms(JaxprBuilder& b, const std::vector<Atom>& terms) {
  if (terms.empty()) return std::nullopt;
  Atom acc = terms[0];
  for (size_t i = 1; i < terms.size(); ++i) acc = add_any(b, acc, terms[i]);
  return acc;
}

}  // namespace

Atom instantiate_zeros(JaxprBuilder& b, const Atom& primal) {
  Atom zeros = zeros_like_aval(b, primal.aval());
  if (!zeros.is_literal()) return zeros;
  Literal constant = zeros.literal();
  constant.array_constant = true;
  return constant;
}

void defjvp(std::string_view prim, std::vector<JvpTerm> terms) {
  define_pass_rules(prim).jvp = [terms](const JvpRuleArgs& a) {
    std::vector<Atom> outs;
    for (size_t i = 0; i < terms.size() && i < a.tangents.size(); ++i)
      if (terms[i] && a.tangents[i])
        outs.push_back(terms[i](a.b, *a.tangents[i], a.primals, a.eqn));
    return std::vector<Tangent>{sum_terms(a.b, outs)};
  };
}

void defjvp2(std::string_view prim, std::vector<JvpTerm2> terms) {
  define_pass_rules(prim).jvp = [terms](const JvpRuleArgs& a) {
    std::vector<Atom> outs;
    Atom ans = a.primal_outs[0];
    for (size_t i = 0; i < terms.size() && i < a.tangents.size(); ++i)
      if (terms[i] && a.tangents[i])
        outs.push_back(terms[i](a.b, *a.tangents[i], ans, a.primals, a.eqn));
    return std::vector<Tangent>{sum_terms(a.b, outs)};
  };
}

void defjvp_zero(std::string_view prim) {
  define_pass_rules(prim).jvp = [](const JvpRuleArgs& a) {
    return std::vector<Tangent>(a.primal_outs.size());
  };
}

void deflinear(std::string_view prim, TransposeRule transpose) {
  define_pass_rules(prim).jvp = [](const JvpRuleArgs& a) {
    std::vector<Atom> tangents;
    for (size_t i = 0; i < a.primals.size(); ++i)
      tangents.push_back(a.tangents[i] ? *a.tangents[i] : instantiate_zeros(a.b, a.primals[i]));
    std::vector<Var> outs = a.b.emit(*a.eqn.prim, tangents, a.eqn.params);
    return std::vector<Tangent>(outs.begin(), outs.end());
  };
  define_pass_rules(prim).transpose = std::move(transpose);
}

Atom unbroadcast(JaxprBuilder& b, const ShapedArray& aval, const Atom& x) {
  const Shape& xs = x.aval().shape;
  if (xs == aval.shape) return x;
  std::vector<int64_t> dims;
  if (aval.shape.empty()) {
    for (size_t i = 0; i < xs.size(); ++i) dims.push_back(int64_t(i));
    return reduce_sum(b, x, dims);
  }
  if (xs.size() != aval.shape.size())
    throw Error("unbroadcast: rank mismatch between " + x.aval().str_short() + " and " +
                aval.str_short());
  for (size_t i = 0; i < xs.size(); ++i)
    if (xs[i] != aval.shape[i]) dims.push_back(int64_t(i));
  Atom summed = dims.empty() ? x : reduce_sum(b, x, dims);
  return reshape(b, summed, aval.shape);
}

Atom maybe_broadcast(JaxprBuilder& b, const Shape& shape, const Atom& x) {
  const Shape& xs = x.aval().shape;
  if (xs == shape) return x;
  if (xs.empty()) return broadcast_in_dim(b, x, shape, {});
  std::vector<int64_t> dims;
  Shape squeezed;
  for (size_t i = 0; i < xs.size(); ++i)
    if (xs[i] == shape[i]) {
      dims.push_back(int64_t(i));
      squeezed.push_back(xs[i]);
    }
  Atom r = reshape(b, x, squeezed);
  return broadcast_in_dim(b, r, shape, dims);
}

Shape broadcast_shapes(const Shape& x, const Shape& y) {
  if (x.empty()) return y;
  if (y.empty()) return x;
  if (x.size() != y.size())
    throw TypeError(
        fmt::format("broadcast_shapes: ranks differ: {} and {}", shape_str(x), shape_str(y)));
  Shape out(x.size());
  for (size_t i = 0; i < x.size(); ++i) out[i] = x[i] == 1 ? y[i] : x[i];
  return out;
}

ParamValue accuracy_of(const Eqn& eqn) {
  const ParamValue* v = eqn.params.find("accuracy");
  return v ? *v : ParamValue(NoneParam{});
}

bool accuracy_is_highest(const Eqn& eqn) {
  const ParamValue* v = eqn.params.find("accuracy");
  if (!v) return false;
  std::string_view text;
  if (v->is<std::string>()) text = v->as<std::string>();
  if (v->is<OpaqueParam>()) text = v->as<OpaqueParam>().text;
  return text.find("HIGHEST") != std::string_view::npos;
}

void unsupported(std::string_view what, const Eqn& eqn) {
  throw UnsupportedError(fmt::format("{} (from {})", what, eqn.source.summarize()));
}

std::vector<Dual> jvp_bind(JaxprBuilder& b, std::string_view prim, const std::vector<Dual>& in,
                           Params params) {
  // A one-eqn jaxpr over fresh invars, differentiated by the jvp pass, then inlined with the
  // invars replaced by the given primals and tangents.
  JaxprBuilder inner;
  inner.set_source(b.source());
  std::vector<Var> invars;
  std::vector<Atom> args;
  std::vector<bool> nonzero;
  for (const Dual& d : in) {
    if (d.primal.is_literal()) {
      args.push_back(d.primal);
      continue;
    }
    Var v(d.primal.aval());
    invars.push_back(v);
    args.push_back(v);
    nonzero.push_back(d.tangent.has_value());
  }
  std::vector<Var> outs = inner.emit(prim, std::move(args), std::move(params));
  Jaxpr one = inner.build(invars, std::vector<Atom>(outs.begin(), outs.end()));
  JvpJaxpr jvp = jvp_jaxpr(one, nonzero, /*instantiate=*/false);

  std::unordered_map<Var, Atom, VarHash> env;
  size_t next_invar = 0, next_tangent = invars.size();
  for (const Dual& d : in) {
    if (d.primal.is_literal()) continue;
    env.emplace(jvp.jaxpr.invars[next_invar++], d.primal);
    if (d.tangent && has_tangent_space(d.primal.aval().dtype))
      env.emplace(jvp.jaxpr.invars[next_tangent++], *d.tangent);
  }
  auto subst = [&](const Atom& a) -> Atom {
    if (a.is_literal()) return a;
    auto it = env.find(a.var());
    return it == env.end() ? a : it->second;
  };
  for (Eqn& e : jvp.jaxpr.eqns) {
    for (Atom& x : e.inputs) x = subst(x);
    b.append(std::move(e));
  }
  std::vector<Dual> result;
  size_t next_out = outs.size();
  for (size_t i = 0; i < outs.size(); ++i) {
    Dual d{subst(jvp.jaxpr.outvars[i]), std::nullopt};
    if (jvp.out_nonzero[i]) d.tangent = subst(jvp.jaxpr.outvars[next_out++]);
    result.push_back(std::move(d));
  }
  return result;
}

Dual jvp_bind1(JaxprBuilder& b, std::string_view prim, const std::vector<Dual>& in, Params params) {
  return jvp_bind(b, prim, in, std::move(params)).at(0);
}

}  // namespace cjax::ad

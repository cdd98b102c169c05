// An eqn's primitive and types: era renames (`pjit`, `xla_call` -> `jit`), params brought to the
// current schema, untyped literals typed, and the binders checked against the shape rule.
#include <fmt/format.h>

#include <exception>

#include "ir/axis_env.h"
#include "ir/lax_params.h"
#include "ir/parse/jaxpr_parser.h"
#include "ir/rules/registry.h"

namespace cjax::parse {
namespace {

const Jaxpr* jaxpr_param(const Params& params, std::string_view key) {
  const ParamValue* v = params.find(key);
  if (!v || !v->is<JaxprRef>()) return nullptr;
  return v->as<JaxprRef>().get();
}

std::optional<DType> invar_dtype(const Jaxpr* j, size_t i) {
  if (!j || i >= j->invars.size()) return std::nullopt;
  return j->invars[i].aval().dtype;
}

std::optional<int64_t> int_param(const Params& params, std::string_view key) {
  const ParamValue* v = params.find(key);
  if (!v || !v->is<int64_t>()) return std::nullopt;
  return v->as<int64_t>();
}

// The dtype of the callee binder that operand `k` feeds, for higher-order eqns whose params say
// how operands map to a jaxpr's invars (call-like, cond, while).
std::optional<DType> callee_dtype(const EqnDraft& d, size_t k) {
  const size_t n = d.inputs.size();
  for (std::string_view key : {"jaxpr", "call_jaxpr", "fun_jaxpr"}) {
    const Jaxpr* j = jaxpr_param(d.params, key);
    if (j && j->invars.size() == n) return invar_dtype(j, k);
  }
  if (const ParamValue* b = d.params.find("branches"); b && b->is<ParamTuple>()) {
    const auto& items = b->as<ParamTuple>().items;
    if (k == 0) return DType::i32;  // the branch index
    if (!items.empty() && items[0].is<JaxprRef>()) {
      const Jaxpr* j = items[0].as<JaxprRef>().get();
      if (j && j->invars.size() + 1 == n) return invar_dtype(j, k - 1);
    }
  }
  const Jaxpr* body = jaxpr_param(d.params, "body_jaxpr");
  const Jaxpr* cond = jaxpr_param(d.params, "cond_jaxpr");
  auto bn = int_param(d.params, "body_nconsts");
  auto cn = int_param(d.params, "cond_nconsts");
  if (body && cond && bn && cn && *bn >= 0 && *cn >= 0 &&
      static_cast<uint64_t>(*bn) <= body->invars.size() &&
      static_cast<uint64_t>(*cn) <= cond->invars.size()) {
    // Operands: cond consts, body consts, carry; body invars: body consts, carry.
    size_t c = static_cast<size_t>(*cn);
    return k < c ? invar_dtype(cond, k) : invar_dtype(body, k - c);
  }
  return std::nullopt;
}

// One dtype shared by all of `avals`, if any.
std::optional<DType> common_dtype(const std::vector<DType>& dtypes) {
  if (dtypes.empty()) return std::nullopt;
  for (DType t : dtypes)
    if (t != dtypes[0]) return std::nullopt;
  return dtypes[0];
}

std::string with_prim_prefix(std::string_view prim, std::string_view message) {
  if (message.starts_with(std::string(prim) + ":")) return std::string(message);
  return fmt::format("{}: {}", prim, message);
}

// Params the current printer leaves out because the binders imply them: broadcast_in_dim's
// `shape` (since jax 0.9.1, with empty `broadcast_dimensions` hidden too), custom_lin's avals.
void add_params_implied_by_binders(EqnDraft& d) {
  // custom_lin's output avals, which cjax carries in a param JAX does not print.
  if (d.prim_name == "custom_lin" && !d.params.has("out_avals")) {
    std::vector<ShapedArray> avals;
    for (const auto& out : d.outs) avals.push_back(out.aval);
    d.params.set("out_avals", lax_params::avals(avals));
  }
  if (d.prim_name == "broadcast_in_dim" && d.outs.size() == 1) {
    if (!d.params.has("shape")) d.params.set("shape", ParamValue::ints(d.outs[0].aval.shape));
    if (!d.params.has("broadcast_dimensions"))
      d.params.set("broadcast_dimensions", ParamValue::ints({}));
  }
}

// all_to_all over one unbound name: its size is how much the concat axis grew.
std::optional<AxisEnvScope> bind_implied_axis(const EqnDraft& d) {
  const ParamValue* name = d.params.find("axis_name");
  const ParamValue* concat = d.params.find("concat_axis");
  if (!name || !concat || !concat->is<int64_t>()) return std::nullopt;
  const std::vector<std::string> names = axis_names_of(*name);
  if (names.size() != 1 || bound_axis_size(names[0])) return std::nullopt;
  const std::string& axis = names[0];
  const Shape& in = d.inputs[0].aval().shape;
  const Shape& out = d.outs[0].aval.shape;
  const int64_t c = concat->as<int64_t>();
  if (c < 0 || size_t(c) >= in.size() || in.size() != out.size() || in[size_t(c)] == 0 ||
      out[size_t(c)] % in[size_t(c)] != 0)
    return std::nullopt;
  return std::optional<AxisEnvScope>(std::in_place, axis, out[size_t(c)] / in[size_t(c)]);
}

}  // namespace

Eqn JaxprParser::finish_eqn(EqnDraft& d) {
  std::string name = d.prim_name;
  bool was_call = name == "pjit" || name == "xla_call";
  if (name == "xla_call" && !d.params.has("jaxpr") && d.params.has("call_jaxpr")) {
    Params renamed;  // keep the read order
    for (const auto& [k, v] : d.params) renamed.set(k == "call_jaxpr" ? "jaxpr" : k, v);
    d.params = std::move(renamed);
  }
  const Primitive* prim = find_primitive(name);
  if (prim && prim->opaque) prim = nullptr;
  if (!prim) prim = &opaque_primitive(was_call ? "jit" : name);
  const bool known = !prim->opaque;
  if (known) add_params_implied_by_binders(d);
  if (known && prim->canonicalize_params) {
    try {
      prim->canonicalize_params(d.params);
    } catch (const std::exception& e) {
      fail(d.offset, with_prim_prefix(prim->name, e.what()));
    }
  }

  // Untyped literals: first the dtype their eqn suggests, else the default for their kind.
  std::vector<DType> typed_inputs;
  {
    size_t u = 0;
    for (size_t i = 0; i < d.inputs.size(); ++i) {
      if (u < d.untyped.size() && d.untyped[u].first == i) {
        ++u;
        continue;
      }
      typed_inputs.push_back(d.inputs[i].aval().dtype);
    }
  }
  std::vector<DType> out_dtypes;
  for (const auto& o : d.outs) out_dtypes.push_back(o.aval.dtype);
  std::vector<DType> suggested, fallback;
  for (const auto& [index, lit] : d.untyped) {
    std::optional<DType> s = callee_dtype(d, index);
    if (!s) s = common_dtype(typed_inputs);
    if (!s && typed_inputs.empty()) s = common_dtype(out_dtypes);
    DType def = default_dtype(lit);
    suggested.push_back(s && fits(lit, *s) ? *s : def);
    fallback.push_back(def);
  }
  auto assign = [&](const std::vector<DType>& dtypes) {
    for (size_t k = 0; k < d.untyped.size(); ++k)
      d.inputs[d.untyped[k].first] = untyped_literal_as(d.untyped[k].second, dtypes[k]);
  };
  assign(suggested);

  std::vector<ShapedArray> inferred;
  auto check = [&]() -> std::optional<std::string> {
    std::vector<ShapedArray> in = avals_of(d.inputs);
    try {
      inferred = infer_avals(*prim, in, d.params);
    } catch (const std::exception& e) {
      return with_prim_prefix(prim->name, e.what());
    }
    if (inferred.size() != d.outs.size())
      return fmt::format("{}: {} output{} written, but the rule gives {}", prim->name,
                         d.outs.size(), d.outs.size() == 1 ? "" : "s", inferred.size());
    for (size_t i = 0; i < inferred.size(); ++i) {
      if (inferred[i].same_type(d.outs[i].aval)) continue;
      if (inferred.size() == 1)
        return fmt::format("{}: output type {} does not match the rule's {}", prim->name,
                           d.outs[i].aval.str_short(), inferred[i].str_short());
      return fmt::format("{}: output {} of {} has type {}, which does not match the rule's {}",
                         prim->name, i + 1, inferred.size(), d.outs[i].aval.str_short(),
                         inferred[i].str_short());
    }
    return std::nullopt;
  };
  // all_to_all's rule reads its axis size from the axis environment, which a parsed jaxpr lacks
  // (a shard_map's mesh comes after its body in the params): an unbound axis takes the size
  // the printed types imply.
  const std::optional<AxisEnvScope> implied_axis =
      known && name == "all_to_all" && d.inputs.size() == 1 && d.outs.size() == 1
          ? bind_implied_axis(d)
          : std::optional<AxisEnvScope>();
  if (known) {
    std::optional<std::string> error = check();
    if (error && suggested != fallback) {  // e.g. index operands of an untyped era
      assign(fallback);
      if (!check()) error.reset();
    }
    if (error) fail(d.offset, *error);
  }

  Eqn eqn;
  eqn.prim = prim;
  eqn.inputs = std::move(d.inputs);
  eqn.params = std::move(d.params);
  for (size_t i = 0; i < d.outs.size(); ++i) {
    ShapedArray aval = d.outs[i].aval;
    if (known) aval.weak_type = inferred[i].weak_type;
    eqn.outputs.push_back(d.outs[i].name.text == "_" ? Var::drop(std::move(aval))
                                                     : Var(std::move(aval)));
  }
  return eqn;
}

}  // namespace cjax::parse

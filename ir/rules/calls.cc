// Call-like higher-order primitives, typed by the jaxpr they carry: jit (jax/_src/pjit.py),
// remat2 (jax/_src/ad_checkpoint.py), custom_jvp_call / custom_vjp_call / custom_lin
// (jax/_src/custom_derivatives.py); and device_put (jax/_src/dispatch.py).
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "ir/errors.h"
#include "ir/lax_params.h"
#include "ir/rules/rule_util.h"
#include "ir/rules/table.h"

namespace cjax {
namespace {

using namespace rules;

// The eqn's operands are the jaxpr's invars (same types); its results are the jaxpr's outvars.
ShapeRule call_rule(std::string name, std::string jaxpr_key) {
  return [name = std::move(name), jaxpr_key = std::move(jaxpr_key)](
             Avals in, const Params& params) -> AvalList {
    const Jaxpr& jaxpr = jaxpr_param(name, params, jaxpr_key);
    std::string what = jaxpr_key == "jaxpr" ? "the jaxpr" : jaxpr_key;
    expect_types(name, what, jaxpr_in_avals(name, what, jaxpr), in);
    return jaxpr_out_avals(name, what, jaxpr);
  };
}

// `name=` first, then the rest sorted (the custom_jvp_call / custom_vjp_call / jit layout).
std::vector<ParamRef> name_first(std::vector<ParamRef> refs) {
  std::stable_partition(refs.begin(), refs.end(),
                        [](const ParamRef& r) { return r.key == "name"; });
  return refs;
}

// --- jit ----------------------------------------------------------------------------------------

constexpr std::array<std::string_view, 11> kJitParams = {
    "name",        "jaxpr",        "donated_invars",      "inline",
    "keep_unused", "in_shardings", "out_shardings",       "in_layouts",
    "out_layouts", "ctx_mesh",     "compiler_options_kvs"};

const std::vector<ParamValue>* items_of(const ParamValue& v) {
  if (v.is<ParamTuple>()) return &v.as<ParamTuple>().items;
  if (v.is<ParamList>()) return &v.as<ParamList>().items;
  return nullptr;
}

template <class Pred>
bool all_items(const ParamValue& v, Pred pred) {
  if (v.is_none()) return true;
  const auto* items = items_of(v);
  return items && std::all_of(items->begin(), items->end(), pred);
}

// Whether jit's pp rule hides this param: JAX hides `inline`, and the others when they hold
// their defaults (nothing donated, shardings unspecified, no layouts, keep_unused=False, no mesh,
// no compiler options).
bool jit_hides(std::string_view key, const ParamValue& v) {
  if (key == "inline") return true;
  if (key == "donated_invars")
    return all_items(v, [](const ParamValue& i) { return i.is<bool>() && !i.as<bool>(); });
  if (key == "in_shardings" || key == "out_shardings")
    return all_items(v, [](const ParamValue& i) {
      auto text = as_text(i);
      return i.is_none() || (text && *text == "UnspecifiedValue");
    });
  if (key == "in_layouts" || key == "out_layouts")
    return all_items(v, [](const ParamValue& i) { return i.is_none(); });
  if (key == "keep_unused") return v.is_none() || (v.is<bool>() && !v.as<bool>());
  if (key == "ctx_mesh") {
    auto text = as_text(v);
    return v.is_none() || (text && (*text == "Mesh()" || text->starts_with("AbstractMesh(()")));
  }
  if (key == "compiler_options_kvs") {
    const auto* items = items_of(v);
    return v.is_none() || (items && items->empty());
  }
  return false;
}

std::vector<ParamRef> jit_print(const Params& params) {
  std::vector<ParamRef> out = sorted_params(params);
  std::erase_if(out, [](const ParamRef& r) { return jit_hides(r.key, *r.value); });
  return name_first(std::move(out));
}

// Text from older JAX: `pjit[...]` (0.4.x-0.6.x) and `xla_call[call_jaxpr=... name=...]` read as
// jit. Keeps jit's own params where they are not at their default; drops the rest (e.g.
// `resource_env`, `in_positional_semantics`, `device`, `backend`).
void jit_canonicalize(Params& params) {
  if (!params.has("jaxpr"))
    if (const ParamValue* call = params.find("call_jaxpr")) {
      ParamValue j = *call;
      params.erase("call_jaxpr");
      params.set("jaxpr", std::move(j));
    }
  std::vector<std::string> drop;
  for (const auto& [k, v] : params) {
    bool known = std::find(kJitParams.begin(), kJitParams.end(), k) != kJitParams.end();
    bool default_value = jit_hides(k, v) && !(k == "inline" && v.is<bool>() && v.as<bool>());
    if (!known || default_value) drop.push_back(k);
  }
  for (const auto& k : drop) params.erase(k);
}

// --- custom_jvp_call / custom_vjp_call
// ------------------------------------------------------------

bool zero_int(const ParamValue& v) {
  return v.is<int64_t>() && v.as<int64_t>() == 0;
}

std::vector<ParamRef> custom_jvp_print(const Params& params) {
  std::vector<ParamRef> out = sorted_params(params);
  std::erase_if(out, [](const ParamRef& r) { return r.key == "num_consts" && zero_int(*r.value); });
  return name_first(std::move(out));
}

std::vector<ParamRef> custom_vjp_print(const Params& params) {
  std::vector<ParamRef> out = sorted_params(params);
  std::erase_if(out, [](const ParamRef& r) {
    return (r.key == "num_consts" && zero_int(*r.value)) || r.key == "out_trees";
  });
  return name_first(std::move(out));
}

void rename(Params& params, std::string_view from, std::string to) {
  const ParamValue* v = params.find(from);
  if (!v || params.has(to)) return;
  ParamValue value = *v;
  params.erase(from);
  params.set(std::move(to), std::move(value));
}

// custom_lin[bwd in_zeros num_res symbolic_zeros] (custom_vjp under jvp): operands are the
// num_res residuals and the nonzero tangents; its results have the custom_vjp function's output
// avals, which cjax carries in a hidden `out_avals` param (JAX keeps them out of the printout).
AvalList custom_lin_rule(Avals in, const Params& params) {
  const int64_t num_res = int_param("custom_lin", params, "num_res");
  if (num_res < 0 || num_res > static_cast<int64_t>(in.size()))
    fail_got("custom_lin", fmt::format("num_res={} does not fit {} operands", num_res, in.size()),
             in);
  const ParamValue* out = params.find("out_avals");
  if (!out)
    fail("custom_lin",
         "carries no out_avals (a custom_lin read from text cannot be typed); trace the program");
  try {
    return lax_params::avals_of(*out);
  } catch (const Error& e) {
    fail("custom_lin", e.what());
  }
}

std::vector<ParamRef> custom_lin_print(const Params& params) {
  std::vector<ParamRef> out = sorted_params(params);
  std::erase_if(out, [](const ParamRef& r) { return r.key == "out_avals"; });
  return out;
}

// --- device_put ---------------------------------------------------------------------------------

// device_put[devices srcs copy_semantics]: one entry per operand in each; values pass through
// (memory kinds are not part of cjax's avals).
AvalList device_put_rule(Avals in, const Params& params) {
  for (const char* key : {"devices", "srcs", "copy_semantics"}) {
    const ParamValue* v = params.find(key);
    if (!v) continue;
    const auto* items = items_of(*v);
    if (items && items->size() != in.size())
      fail_got(
          "device_put",
          fmt::format("param '{}' has {} entries for {} operands", key, items->size(), in.size()),
          in);
  }
  return AvalList(in.begin(), in.end());
}

}  // namespace

void register_calls(PrimitiveTable& table) {
  Primitive jit = make_primitive("jit", call_rule("jit", "jaxpr"));
  jit.higher_order = true;
  jit.call_body = "jaxpr";
  jit.print_params = jit_print;
  jit.canonicalize_params = jit_canonicalize;
  table.add(std::move(jit));

  // remat2[differentiated jaxpr policy prevent_cse]: all params printed, sorted.
  Primitive remat = make_primitive("remat2", call_rule("remat2", "jaxpr"));
  remat.higher_order = true;
  remat.call_body = "jaxpr";
  table.add(std::move(remat));

  Primitive jvp = make_primitive("custom_jvp_call", call_rule("custom_jvp_call", "call_jaxpr"));
  jvp.higher_order = true;
  jvp.call_body = "call_jaxpr";
  jvp.print_params = custom_jvp_print;
  // jax 0.4.x printed the rule as `jvp_jaxpr_thunk=<function ...>`; current JAX prints `jvp=`.
  jvp.canonicalize_params = [](Params& p) { rename(p, "jvp_jaxpr_thunk", "jvp"); };
  table.add(std::move(jvp));

  Primitive vjp = make_primitive("custom_vjp_call", call_rule("custom_vjp_call", "call_jaxpr"));
  vjp.higher_order = true;
  vjp.call_body = "call_jaxpr";
  vjp.print_params = custom_vjp_print;
  vjp.canonicalize_params = [](Params& p) {
    rename(p, "fun_jaxpr", "call_jaxpr");
    rename(p, "fwd_jaxpr_thunk", "fwd");
    p.erase("out_trees");
  };
  table.add(std::move(vjp));

  Primitive lin = make_primitive("custom_lin", custom_lin_rule);
  lin.print_params = custom_lin_print;
  table.add(std::move(lin));

  table.add(moves_data(make_primitive("device_put", device_put_rule)));
}

}  // namespace cjax

// Autodiff rules of the identity-like primitives: copy and reduce_precision (linear, JAX's
// deflinear), name (checkpoint_name: the tangent is not named), optimization_barrier (a barrier
// over the nonzero tangents / cotangents) and device_put (linear; the transpose moves the
// cotangents back where the primals came from).
#include <string>

#include "passes/ad_rules/helpers.h"
#include "passes/ad_rules/register.h"
#include "passes/primitive_rules.h"

namespace cjax {

namespace {

using namespace ad;
using namespace lax_ops;

// The entries of a per-operand list param at `indices` (the param as it is when it is not a
// tuple or list).
ParamValue pick(const ParamValue& v, const std::vector<size_t>& indices) {
  const std::vector<ParamValue>* items = nullptr;
  if (v.is<ParamTuple>()) items = &v.as<ParamTuple>().items;
  if (v.is<ParamList>()) items = &v.as<ParamList>().items;
  if (!items) return v;
  std::vector<ParamValue> out;
  for (size_t i : indices)
    if (i < items->size()) out.push_back((*items)[i]);
  if (v.is<ParamList>()) return ParamList{std::move(out)};
  return ParamTuple{std::move(out)};
}

std::string_view text_of(const ParamValue& v) {
  if (v.is<std::string>()) return v.as<std::string>();
  if (v.is<OpaqueParam>()) return v.as<OpaqueParam>().text;
  return {};
}

// _device_put_transpose's copy semantics: a reused input becomes a copy; donation cannot be
// transposed.
ParamValue transposed_copy_semantics(const ParamValue& v, const Eqn& eqn) {
  const std::vector<ParamValue>* items = nullptr;
  if (v.is<ParamTuple>()) items = &v.as<ParamTuple>().items;
  if (v.is<ParamList>()) items = &v.as<ParamList>().items;
  if (!items) return v;
  std::vector<ParamValue> out;
  for (const ParamValue& item : *items) {
    std::string_view text = text_of(item);
    if (text.find("DONATE_INPUT") != std::string_view::npos)
      unsupported("transpose: device_put with donate=True cannot be transposed", eqn);
    if (text.find("REUSE_INPUT") != std::string_view::npos) {
      std::string copy(text);
      copy.replace(copy.find("REUSE_INPUT"), 11, "ALWAYS_COPY");
      out.push_back(item.is<std::string>() ? ParamValue(copy) : ParamValue(OpaqueParam{copy}));
    } else {
      out.push_back(item);
    }
  }
  if (v.is<ParamList>()) return ParamList{std::move(out)};
  return ParamTuple{std::move(out)};
}

std::vector<Cotangent> device_put_transpose(const TransposeRuleArgs& a) {
  std::vector<size_t> idx;
  std::vector<Atom> cts;
  for (size_t i = 0; i < a.args.size(); ++i)
    if (a.args[i].linear && a.cts[i]) {
      idx.push_back(i);
      cts.push_back(*a.cts[i]);
    }
  std::vector<Cotangent> out(a.args.size());
  if (idx.empty()) return out;
  Params p = a.eqn.params;
  const ParamValue* devices = a.eqn.params.find("devices");
  const ParamValue* srcs = a.eqn.params.find("srcs");
  const ParamValue* copy = a.eqn.params.find("copy_semantics");
  if (srcs) p.set("devices", pick(*srcs, idx));
  if (devices) p.set("srcs", pick(*devices, idx));
  if (copy) p.set("copy_semantics", transposed_copy_semantics(pick(*copy, idx), a.eqn));
  std::vector<Var> ys = a.b.emit("device_put", cts, std::move(p));
  for (size_t k = 0; k < idx.size(); ++k) out[idx[k]] = ys[k];
  return out;
}

}  // namespace

void register_identity_ad_rules() {
  deflinear("copy", [](const TransposeRuleArgs& a) {
    return std::vector<Cotangent>{unary(a.b, "copy", *a.cts[0])};
  });
  deflinear("reduce_precision", [](const TransposeRuleArgs& a) {
    return std::vector<Cotangent>{a.b.emit1("reduce_precision", {*a.cts[0]}, a.eqn.params)};
  });

  // name_jvp: the primal keeps its name; the tangent is not named.
  define_pass_rules("name").jvp = [](const JvpRuleArgs& a) {
    return std::vector<Tangent>{a.tangents[0]};
  };

  define_pass_rules("optimization_barrier").jvp = [](const JvpRuleArgs& a) {
    std::vector<Atom> nz;
    for (const Tangent& t : a.tangents)
      if (t) nz.push_back(*t);
    std::vector<Var> outs = a.b.emit("optimization_barrier", nz);
    std::vector<Tangent> result;
    size_t k = 0;
    for (const Tangent& t : a.tangents) result.push_back(t ? Tangent(outs[k++]) : std::nullopt);
    return result;
  };
  define_pass_rules("optimization_barrier").transpose = [](const TransposeRuleArgs& a) {
    std::vector<Atom> nz;
    for (const Cotangent& ct : a.cts)
      if (ct) nz.push_back(*ct);
    std::vector<Var> outs = a.b.emit("optimization_barrier", nz);
    std::vector<Cotangent> result;
    size_t k = 0;
    for (const Cotangent& ct : a.cts) result.push_back(ct ? Cotangent(outs[k++]) : std::nullopt);
    return result;
  };

  deflinear("device_put", device_put_transpose);
}

}  // namespace cjax

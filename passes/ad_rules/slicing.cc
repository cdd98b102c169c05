// Autodiff rules of slice, dynamic_slice and dynamic_update_slice (jax/_src/lax/slicing.py).
// All are linear in their array operands; start indices are never differentiated.
#include "passes/ad_rules/helpers.h"
#include "passes/ad_rules/register.h"
#include "passes/primitive_rules.h"

namespace cjax {

namespace {

using namespace ad;
using namespace lax_ops;

std::vector<Atom> start_indices(std::span<const TransposeArg> args, size_t first) {
  std::vector<Atom> out;
  for (size_t i = first; i < args.size(); ++i) out.push_back(args[i].value);
  return out;
}

void expect_nonlinear_indices(const TransposeRuleArgs& a, size_t first) {
  for (size_t i = first; i < a.args.size(); ++i)
    if (a.args[i].linear)
      unsupported("transpose: '" + a.eqn.prim->name + "' is not linear in its start indices",
                  a.eqn);
}

// The slice's cotangent, padded with zeros back to the operand's shape (interior padding undoes
// the strides).
std::vector<Cotangent> slice_transpose(const TransposeRuleArgs& a) {
  const Atom& ct = *a.cts[0];
  const Shape& shape = a.args[0].aval().shape;
  const Shape& ct_shape = ct.aval().shape;
  std::vector<int64_t> start = a.eqn.params.get_ints("start_indices");
  std::vector<int64_t> limit = a.eqn.params.get_ints("limit_indices");
  const ParamValue* sp = a.eqn.params.find("strides");
  std::vector<int64_t> strides;
  if (sp && !sp->is_none()) strides = sp->to_ints();
  bool unit = true;
  for (int64_t s : strides) unit &= s == 1;
  std::vector<PadDim> pads;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (unit) {
      pads.push_back({start[d], shape[d] - limit[d], 0});
    } else {
      int64_t real_limit = start[d] + (ct_shape[d] == 0 ? 0 : 1 + (ct_shape[d] - 1) * strides[d]);
      pads.push_back({start[d], shape[d] - real_limit, strides[d] - 1});
    }
  }
  return {pad(a.b, ct, const_like(a.b, ct, 0.0), pads)};
}

}  // namespace

void register_slicing_ad_rules() {
  deflinear("slice", slice_transpose);

  define_pass_rules("dynamic_slice").jvp = [](const JvpRuleArgs& a) -> std::vector<Tangent> {
    std::vector<Atom> idx(a.primals.begin() + 1, a.primals.end());
    return {dynamic_slice(a.b, *a.tangents[0], idx, a.eqn.params.get_ints("slice_sizes"))};
  };
  define_pass_rules("dynamic_slice").transpose = [](const TransposeRuleArgs& a) {
    expect_nonlinear_indices(a, 1);
    const Atom& ct = *a.cts[0];
    std::vector<Cotangent> cts(a.args.size());
    Atom zeros = full(a.b, a.args[0].aval().shape, 0.0, ct.aval().dtype);
    cts[0] = dynamic_update_slice(a.b, zeros, ct, start_indices(a.args, 1));
    return cts;
  };

  define_pass_rules("dynamic_update_slice").jvp = [](const JvpRuleArgs& a) -> std::vector<Tangent> {
    if (!a.tangents[0] && !a.tangents[1]) return {std::nullopt};
    Atom g_operand = a.tangents[0] ? *a.tangents[0] : zeros_like_aval(a.b, a.primals[0].aval());
    Atom g_update = a.tangents[1] ? *a.tangents[1] : zeros_like_aval(a.b, a.primals[1].aval());
    std::vector<Atom> idx(a.primals.begin() + 2, a.primals.end());
    return {dynamic_update_slice(a.b, g_operand, g_update, idx)};
  };
  define_pass_rules("dynamic_update_slice").transpose = [](const TransposeRuleArgs& a) {
    expect_nonlinear_indices(a, 2);
    const Atom& t = *a.cts[0];
    std::vector<Atom> idx = start_indices(a.args, 2);
    const Shape& update_shape = a.args[1].aval().shape;
    std::vector<Cotangent> cts(a.args.size());
    Atom zeros = full_like(a.b, t, 0.0, update_shape);
    if (a.args[0].linear) cts[0] = dynamic_update_slice(a.b, t, zeros, idx);
    if (a.args[1].linear) cts[1] = dynamic_slice(a.b, t, idx, update_shape);
    return cts;
  };
}

}  // namespace cjax

// Batching of the custom-derivative calls, as JAX's BatchTrace.process_custom_jvp_call and
// process_custom_vjp_call: the call stays a custom_jvp_call / custom_vjp_call whose call_jaxpr is
// the batched body, and whose rules are the user's rules batched when a pass traces them:
// - jvp: the rule traced for one example, batched with the primals' axes for its primals and
//   tangents, its outputs moved to the call's output axes;
// - fwd: likewise, its residuals keeping the axes they come out with; the bwd that reads them
//   (handed to custom_lin with the residuals) is the user's bwd batched over those axes and the
//   outputs', each cotangent moved to its primal's axis, or summed over the batch where that
//   primal is not batched (JAX's _match_axes_and_sum).
// A call read from text has no rules: only its body is batched.
#include <fmt/format.h>

#include "ir/errors.h"
#include "passes/batch_rules/register.h"
#include "passes/batching.h"
#include "passes/custom_rules.h"
#include "passes/inline.h"
#include "passes/lax/reductions.h"
#include "passes/primitive_rules.h"

namespace cjax {
namespace {

using namespace batching;

// One example's avals: each batched aval without its batch axis.
std::vector<ShapedArray> unbatched(std::span<const ShapedArray> avals,
                                   std::span<const BatchDim> dims) {
  std::vector<ShapedArray> out;
  for (size_t i = 0; i < avals.size(); ++i) {
    ShapedArray a = avals[i];
    if (dims[i]) a.shape.erase(a.shape.begin() + *dims[i]);
    out.push_back(a);
  }
  return out;
}

// `dims` with the entries marked in `drop` left out (the zero tangents a rule is not given).
std::vector<BatchDim> without(std::span<const BatchDim> dims, std::span<const bool> drop) {
  std::vector<BatchDim> out;
  for (size_t i = 0; i < dims.size(); ++i)
    if (!drop[i]) out.push_back(dims[i]);
  return out;
}

// custom_jvp_call's jvp, batched.
class BatchedJvpRule final : public CustomJvpRule {
 public:
  BatchedJvpRule(std::shared_ptr<const CustomJvpRule> inner, std::vector<BatchDim> in_dims,
                 std::vector<BatchDim> out_dims, BatchAxis axis)
      : inner_(std::move(inner)),
        in_dims_(std::move(in_dims)),
        out_dims_(std::move(out_dims)),
        axis_(std::move(axis)) {}
  std::string repr() const override { return inner_->repr(); }
  Jaxpr jvp_jaxpr(std::span<const ShapedArray> primals,
                  std::span<const bool> zeros) const override {
    const Jaxpr one = inner_->jvp_jaxpr(unbatched(primals, in_dims_), zeros);
    std::vector<BatchDim> dims = in_dims_;
    for (const BatchDim& d : without(in_dims_, zeros)) dims.push_back(d);
    std::vector<BatchDim> outs = out_dims_;
    outs.insert(outs.end(), out_dims_.begin(), out_dims_.end());
    return batch_jaxpr(one, dims, axis_, outs).jaxpr;
  }

 private:
  std::shared_ptr<const CustomJvpRule> inner_;
  std::vector<BatchDim> in_dims_, out_dims_;
  BatchAxis axis_;
};

// custom_vjp_call's bwd for residuals batched along res_dims and output cotangents along
// ct_dims; each input cotangent ends at its primal's axis (in_dims).
class BatchedBwd final : public CustomVjpBwd {
 public:
  BatchedBwd(std::shared_ptr<const CustomVjpBwd> inner, std::vector<BatchDim> res_dims,
             std::vector<BatchDim> ct_dims, std::vector<BatchDim> in_dims, BatchAxis axis)
      : inner_(std::move(inner)),
        res_dims_(std::move(res_dims)),
        ct_dims_(std::move(ct_dims)),
        in_dims_(std::move(in_dims)),
        axis_(std::move(axis)) {}
  std::string repr() const override { return inner_->repr(); }
  Jaxpr bwd_jaxpr(std::span<const ShapedArray> residuals, std::span<const ShapedArray> cts,
                  std::span<const bool> zeros) const override {
    const Jaxpr one =
        inner_->bwd_jaxpr(unbatched(residuals, res_dims_), unbatched(cts, ct_dims_), zeros);
    std::vector<BatchDim> dims = res_dims_;
    for (const BatchDim& d : without(ct_dims_, zeros)) dims.push_back(d);
    const BatchedJaxpr batched = batch_jaxpr(one, dims, axis_);
    // The batched bwd, each output moved to its primal's axis or summed over the batch.
    JaxprBuilder b;
    std::vector<Var> invars;
    for (const Var& v : batched.jaxpr.invars) invars.emplace_back(v.aval());
    const std::vector<Atom> args(invars.begin(), invars.end());
    std::vector<Atom> outs = inline_jaxpr(b, batched.jaxpr, {}, args);
    if (outs.size() != in_dims_.size())
      throw TypeError(fmt::format("custom_vjp: bwd returns {} cotangents for {} primal inputs",
                                  outs.size(), in_dims_.size()));
    for (size_t k = 0; k < outs.size(); ++k) {
      const BatchDim got = batched.out_dims[k], want = in_dims_[k];
      if (got && !want)
        outs[k] = lax_ops::reduce_sum(b, outs[k], {*got});
      else
        outs[k] = matchaxis(b, outs[k], got, want, axis_.size, "a custom_vjp bwd cotangent");
    }
    return b.build(std::move(invars), std::move(outs));
  }

 private:
  std::shared_ptr<const CustomVjpBwd> inner_;
  std::vector<BatchDim> res_dims_, ct_dims_, in_dims_;
  BatchAxis axis_;
};

// custom_vjp_call's fwd, batched: its outputs at the call's output axes, its residuals where
// they fall, with the bwd batched to match.
class BatchedFwd final : public CustomVjpFwd {
 public:
  BatchedFwd(std::shared_ptr<const CustomVjpFwd> inner, std::shared_ptr<const CustomVjpBwd> bwd,
             std::vector<BatchDim> in_dims, std::vector<BatchDim> out_dims, BatchAxis axis)
      : inner_(std::move(inner)),
        bwd_(std::move(bwd)),
        in_dims_(std::move(in_dims)),
        out_dims_(std::move(out_dims)),
        axis_(std::move(axis)) {}
  std::string repr() const override { return inner_->repr(); }
  Traced fwd_jaxpr(std::span<const ShapedArray> primals,
                   std::span<const bool> perturbed) const override {
    Traced one = inner_->fwd_jaxpr(unbatched(primals, in_dims_), perturbed);
    const BatchedJaxpr free = batch_jaxpr(one.jaxpr, in_dims_, axis_);
    std::vector<BatchDim> outs = out_dims_;
    const std::vector<BatchDim> res_dims(free.out_dims.end() - ptrdiff_t(one.num_res),
                                         free.out_dims.end());
    outs.insert(outs.end(), res_dims.begin(), res_dims.end());
    Traced t;
    t.jaxpr = batch_jaxpr(one.jaxpr, in_dims_, axis_, outs).jaxpr;
    t.num_res = one.num_res;
    auto inner_bwd = one.bwd ? std::dynamic_pointer_cast<const CustomVjpBwd>(one.bwd) : bwd_;
    t.bwd = std::make_shared<const BatchedBwd>(inner_bwd, res_dims, out_dims_, in_dims_, axis_);
    return t;
  }

 private:
  std::shared_ptr<const CustomVjpFwd> inner_;
  std::shared_ptr<const CustomVjpBwd> bwd_;
  std::vector<BatchDim> in_dims_, out_dims_;
  BatchAxis axis_;
};

// The call over its batched body (batched once, each output keeping the axis it comes out
// with), its rules replaced.
BatchedOutputs rebind(const BatchRuleArgs& a, BatchedJaxpr body,
                      std::vector<std::pair<std::string, ParamValue>> rules) {
  Params p = with_param(a.eqn.params, "call_jaxpr",
                        JaxprRef(std::make_shared<const Jaxpr>(std::move(body.jaxpr))));
  for (auto& [key, value] : rules) p = with_param(p, key, std::move(value));
  std::vector<Atom> outs = a.b.bind(*a.eqn.prim, {a.args.begin(), a.args.end()}, std::move(p));
  return {outs, body.out_dims};
}

BatchedJaxpr batched_body(const BatchRuleArgs& a) {
  return batch_jaxpr(*a.eqn.params.get_jaxpr("call_jaxpr"), a.dims, a.axis);
}

// The primal operands' batch axes (after the captured values).
std::vector<BatchDim> primal_dims(const BatchRuleArgs& a) {
  return {a.dims.begin() + ptrdiff_t(custom_num_consts(a.eqn)), a.dims.end()};
}

// The rules are batched lazily, when a pass traces them: a rule usually calls its own function,
// whose batching would otherwise batch the rule again, without end. The outputs keep the axes
// the batched body gives them; a rule whose output is batched where the body's is not is refused
// then, by batch_jaxpr, naming the output.
BatchedOutputs custom_jvp_call(const BatchRuleArgs& a) {
  BatchedJaxpr body = batched_body(a);
  auto rule = custom_rule_ptr<CustomJvpRule>(a.eqn, "jvp");
  if (!rule) return rebind(a, std::move(body), {});
  auto batched =
      std::make_shared<const BatchedJvpRule>(rule, primal_dims(a), body.out_dims, a.axis);
  return rebind(a, std::move(body), {{"jvp", ObjectRef(batched)}});
}

BatchedOutputs custom_vjp_call(const BatchRuleArgs& a) {
  BatchedJaxpr body = batched_body(a);
  auto fwd = custom_rule_ptr<CustomVjpFwd>(a.eqn, "fwd");
  auto bwd = custom_rule_ptr<CustomVjpBwd>(a.eqn, "bwd");
  if (!fwd || !bwd) return rebind(a, std::move(body), {});
  auto batched =
      std::make_shared<const BatchedFwd>(fwd, bwd, primal_dims(a), body.out_dims, a.axis);
  return rebind(a, std::move(body), {{"fwd", ObjectRef(batched)}});
}

}  // namespace

void register_custom_batch_rules() {
  define_pass_rules("custom_jvp_call").batch = custom_jvp_call;
  define_pass_rules("custom_vjp_call").batch = custom_vjp_call;
}

}  // namespace cjax

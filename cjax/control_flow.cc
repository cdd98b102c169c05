#include "cjax/control_flow.h"

#include <fmt/format.h>

#include "cjax/bind.h"
#include "cjax/eval_jaxpr.h"
#include "cjax/lax.h"
#include "cjax/trace.h"
#include "ir/errors.h"
#include "ir/rules/registry.h"

namespace cjax::detail {
namespace {

// A traced body: its jaxpr with the captured constants as leading invars, and their values.
struct Traced {
  Jaxpr jaxpr;
  std::vector<Array> consts;
};

// Traces `fn` on tracers of `in_avals`; each output marked in `strengthen` is converted to its
// strong type first (to match a strongly typed carry).
Traced trace(const FlatBody& fn, const std::vector<ShapedArray>& in_avals,
             const std::vector<bool>& strengthen = {}) {
  TraceScope scope;
  std::vector<Array> tracers;
  for (const ShapedArray& a : in_avals) tracers.push_back(scope.new_arg(a));
  std::vector<Array> outs = fn(tracers);
  for (size_t i = 0; i < outs.size() && i < strengthen.size(); ++i)
    if (strengthen[i] && outs[i].weak_type())
      outs[i] = lax::convert_element_type(outs[i], outs[i].dtype(), false);
  ClosedTrace ct = scope.finish(outs);
  Traced t;
  t.jaxpr = std::move(ct.jaxpr);
  convert_constvars(t.jaxpr);
  t.jaxpr.debug = nullptr;
  t.consts = std::move(ct.consts);
  return t;
}

std::vector<ShapedArray> avals(const std::vector<Array>& xs) {
  std::vector<ShapedArray> out;
  for (const Array& x : xs) {
    if (!x.defined()) throw UsageError("control flow: an operand holds a null cjax::Array");
    out.push_back(x.aval());
  }
  return out;
}

std::string avals_str(const std::vector<ShapedArray>& avals) {
  std::string s;
  for (const ShapedArray& a : avals) s += (s.empty() ? "" : ", ") + a.str_short();
  return s;
}

// Traces a loop body whose first `init.size()` outputs are the new carry. A weakly typed initial
// carry whose new value is strongly typed is converted to that type and the body traced again
// (JAX's _promote_weak_typed_inputs).
Traced trace_loop_body(const FlatBody& fn, std::vector<Array>& init,
                       const std::vector<ShapedArray>& extra_avals, const char* what,
                       const SourceInfo& src) {
  for (int attempt = 0;; ++attempt) {
    std::vector<ShapedArray> in = avals(init);
    size_t ncarry = in.size();
    in.insert(in.end(), extra_avals.begin(), extra_avals.end());
    Traced t = trace(fn, in);
    std::vector<ShapedArray> out = t.jaxpr.out_avals();
    if (out.size() < ncarry)
      throw_type_error(src, fmt::format("{}: the body returns {} values for {} carries", what,
                                        out.size(), ncarry));
    bool retrace = false;
    for (size_t i = 0; i < ncarry; ++i) {
      const ShapedArray& a = in[i];
      const ShapedArray& b = out[i];
      if (a.same_type(b) && a.weak_type == b.weak_type) continue;
      if (a.shape == b.shape && a.weak_type && !b.weak_type) {
        init[i] = lax::convert_element_type(init[i], b.dtype, false, src);
      } else if (a.same_type(b)) {
        continue;  // a strong carry whose new value is weak: accepted, as JAX's typematch does
      } else {
        std::vector<ShapedArray> ins(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(ncarry));
        std::vector<ShapedArray> outs(out.begin(),
                                      out.begin() + static_cast<std::ptrdiff_t>(ncarry));
        throw_type_error(src, fmt::format("{}: the body's carry input and output must have equal "
                                          "types, got input ({}) and output ({})",
                                          what, avals_str(ins), avals_str(outs)));
      }
      retrace = true;
    }
    if (!retrace) return t;
    if (attempt > 1) throw_type_error(src, fmt::format("{}: the carry types do not settle", what));
  }
}

}  // namespace

std::vector<Array> scan_flat(const FlatBody& body, std::vector<Array> init,
                             const std::vector<Array>& xs, std::optional<int64_t> length,
                             bool reverse, const SourceInfo& src, const ScanSchedule& schedule) {
  std::optional<int64_t> n = length;
  std::vector<ShapedArray> x_avals;
  for (const ShapedArray& a : avals(xs)) {
    if (a.shape.empty())
      throw_type_error(
          src, fmt::format("scan: scanned-over operand {} has no leading axis", a.str_short()));
    if (n && *n != a.shape[0])
      throw_type_error(src, fmt::format("scan: scanned-over operands have leading axis {} but "
                                        "the length is {}",
                                        a.shape[0], *n));
    n = a.shape[0];
    ShapedArray slice = a;
    slice.shape.erase(slice.shape.begin());
    x_avals.push_back(slice);
  }
  if (!n) throw UsageError("scan: give a length when there is nothing to scan over");
  if (*n < 0) throw UsageError(fmt::format("scan: negative length {}", *n));
  Traced t = trace_loop_body(body, init, x_avals, "scan", src);
  std::vector<Array> inputs = t.consts;
  inputs.insert(inputs.end(), init.begin(), init.end());
  inputs.insert(inputs.end(), xs.begin(), xs.end());
  size_t n_in = t.jaxpr.invars.size();
  Params params{{"_split_transpose", false},
                {"jaxpr", JaxprRef(std::make_shared<const Jaxpr>(std::move(t.jaxpr)))},
                {"length", *n},
                {"linear", ParamValue::bools(std::vector<bool>(n_in, false))},
                {"num_carry", static_cast<int64_t>(init.size())},
                {"num_consts", static_cast<int64_t>(t.consts.size())},
                {"reverse", reverse},
                {"unroll", int64_t{1}}};
  if (schedule.kind == ScanSchedule::Kind::none)
    return cjax::bind("scan", inputs, std::move(params), src);
  Eqn eqn;
  eqn.prim = &get_primitive("scan");
  eqn.params = std::move(params);
  eqn.source = src;
  for (const Array& a : inputs) eqn.inputs.push_back(Var(a.aval()));
  return eval_jaxpr(schedule_scan(eqn, schedule), {}, inputs);
}

Array cond_index(const Array& pred, const SourceInfo& src) {
  if (pred.ndim() != 0)
    throw_type_error(
        src, fmt::format("cond: the predicate must be a scalar, got {}", pred.aval().str_short()));
  Array p = pred.dtype() == DType::bool_ ? pred : lax::ne(pred, Array(0), src);
  return lax::convert_element_type(p, DType::i32, false, src);
}

Array switch_index(const Array& index, size_t num_branches, const SourceInfo& src) {
  if (index.ndim() != 0 || (!is_integer(index.dtype()) && index.dtype() != DType::bool_))
    throw_type_error(src, fmt::format("switch: the index must be an integer scalar, got {}",
                                      index.aval().str_short()));
  Array i = lax::convert_element_type(index, DType::i32, false, src);
  if (num_branches == 1) return i;
  Array lo = Array::scalar(0, DType::i32);
  Array hi = Array::scalar(static_cast<double>(num_branches - 1), DType::i32);
  return bind1("clamp", {lo, i, hi}, {}, src);
}

std::vector<Array> cond_flat(const std::vector<FlatBody>& branches, const Array& index,
                             const std::vector<Array>& operands, const SourceInfo& src) {
  std::vector<ShapedArray> in = avals(operands);
  std::vector<Traced> traced;
  for (const FlatBody& b : branches) traced.push_back(trace(b, in));
  // Outputs that differ only in weak type are made strong in every branch.
  std::vector<ShapedArray> out0 = traced[0].jaxpr.out_avals();
  std::vector<bool> strengthen(out0.size(), false);
  for (size_t k = 1; k < traced.size(); ++k) {
    std::vector<ShapedArray> out = traced[k].jaxpr.out_avals();
    bool same = out.size() == out0.size();
    for (size_t i = 0; same && i < out.size(); ++i) {
      same = out[i].dtype == out0[i].dtype && out[i].shape == out0[i].shape;
      if (out[i].weak_type != out0[i].weak_type) strengthen[i] = true;
    }
    if (!same)
      throw_type_error(src, fmt::format("cond: branch {} returns ({}) but branch 0 returns ({})", k,
                                        avals_str(out), avals_str(out0)));
  }
  for (bool s : strengthen)
    if (s) {
      traced.clear();
      for (const FlatBody& b : branches) traced.push_back(trace(b, in, strengthen));
      break;
    }
  // Every branch takes every branch's constants (JAX's common consts), then the operands.
  std::vector<Array> inputs{index};
  std::vector<ShapedArray> const_avals;
  for (const Traced& t : traced)
    for (const Array& c : t.consts) {
      inputs.push_back(c);
      const_avals.push_back(c.aval());
    }
  ParamTuple branch_params;
  size_t offset = 0;
  for (Traced& t : traced) {
    std::vector<Var> invars;
    for (size_t i = 0; i < const_avals.size(); ++i) {
      if (i >= offset && i < offset + t.consts.size())
        invars.push_back(t.jaxpr.invars[i - offset]);
      else
        invars.emplace_back(const_avals[i]);
    }
    invars.insert(invars.end(),
                  t.jaxpr.invars.begin() + static_cast<std::ptrdiff_t>(t.consts.size()),
                  t.jaxpr.invars.end());
    offset += t.consts.size();
    t.jaxpr.invars = std::move(invars);
    branch_params.items.emplace_back(JaxprRef(std::make_shared<const Jaxpr>(std::move(t.jaxpr))));
  }
  inputs.insert(inputs.end(), operands.begin(), operands.end());
  return cjax::bind("cond", inputs, Params{{"branches", std::move(branch_params)}}, src);
}

std::vector<Array> while_flat(const FlatBody& cond, const FlatBody& body, std::vector<Array> init,
                              const SourceInfo& src) {
  Traced b = trace_loop_body(body, init, {}, "while_loop", src);
  Traced c = trace(cond, avals(init));
  std::vector<ShapedArray> pred = c.jaxpr.out_avals();
  if (pred.size() != 1 || pred[0].dtype != DType::bool_ || !pred[0].shape.empty())
    throw_type_error(src, fmt::format("while_loop: cond_fun must return a boolean scalar, got ({})",
                                      avals_str(pred)));
  std::vector<Array> inputs = c.consts;
  inputs.insert(inputs.end(), b.consts.begin(), b.consts.end());
  inputs.insert(inputs.end(), init.begin(), init.end());
  Params params{{"body_jaxpr", JaxprRef(std::make_shared<const Jaxpr>(std::move(b.jaxpr)))},
                {"body_nconsts", static_cast<int64_t>(b.consts.size())},
                {"cond_jaxpr", JaxprRef(std::make_shared<const Jaxpr>(std::move(c.jaxpr)))},
                {"cond_nconsts", static_cast<int64_t>(c.consts.size())}};
  return cjax::bind("while", inputs, std::move(params), src);
}

Array add_one(const Array& i, const SourceInfo& src) {
  return lax::add(i, Array(1), src);
}

Array less(const Array& x, const Array& y, const SourceInfo& src) {
  return lax::lt(x, y, src);
}

}  // namespace cjax::detail

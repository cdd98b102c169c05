// Batching rules of scan and cond (JAX: loops._scan_batching_rule, conditionals.
// _cond_batching_rule). A scan's body is batched with its batched inputs at axis 0, its carries
// batched where the initial value or the new value is (a fixpoint), the stacked xs and ys batched
// at axis 1. A cond with a batched index runs every branch on all examples and picks each
// output with select_n, as JAX does; with an unbatched index it stays a cond of batched branches.
#include "passes/batch_rules/register.h"
#include "passes/batching.h"
#include "passes/control_flow/cf_util.h"
#include "passes/inline.h"
#include "passes/lax/lax.h"
#include "passes/primitive_rules.h"

namespace cjax {
namespace {

using namespace batching;

std::vector<BatchDim> zero_where(const std::vector<bool>& batched) {
  std::vector<BatchDim> out;
  for (bool b : batched) out.push_back(b ? BatchDim(0) : std::nullopt);
  return out;
}

BatchedOutputs scan(const BatchRuleArgs& a) {
  const Eqn& eqn = a.eqn;
  const Jaxpr& body = cf::body_param(eqn, "jaxpr");
  const auto nc = static_cast<size_t>(eqn.params.get_int("num_consts"));
  const auto nk = static_cast<size_t>(eqn.params.get_int("num_carry"));
  const size_t nx = a.args.size() - nc - nk, ny = body.outvars.size() - nk;
  std::vector<bool> batched;
  for (BatchDim d : a.dims) batched.push_back(d.has_value());
  std::vector<bool> carry = cf::slice(batched, nc, nk);
  BatchedJaxpr batched_body = cf::carry_fixpoint(
      carry,
      [&](const std::vector<bool>& carry_now) {
        std::vector<bool> in = cf::slice(batched, 0, nc);
        in = cf::concat(cf::concat(in, carry_now), cf::slice(batched, nc + nk, nx));
        std::vector<BatchDim> out;
        for (bool c : carry_now) out.push_back(c ? BatchDim(0) : BatchDim(kZeroIfMapped));
        out.insert(out.end(), ny, BatchDim(kZeroIfMapped));
        return batch_jaxpr(body, zero_where(in), a.axis, out);
      },
      [&](const BatchedJaxpr& r) {
        std::vector<bool> out;
        for (size_t i = 0; i < nk; ++i) out.push_back(r.out_dims[i].has_value());
        return out;
      });
  std::vector<Atom> args;
  for (size_t i = 0; i < a.args.size(); ++i) {
    const Atom& x = a.args[i];
    const BatchDim d = a.dims[i];
    if (i < nc)
      args.push_back(d ? moveaxis(a.b, x, *d, 0) : x);
    else if (i < nc + nk)
      args.push_back(
          carry[i - nc] ? (d ? moveaxis(a.b, x, *d, 0) : broadcast(a.b, x, a.axis.size, 0)) : x);
    else
      args.push_back(d ? moveaxis(a.b, x, *d, 1) : x);
  }
  std::vector<Atom> outs = a.b.bind(
      *eqn.prim, std::move(args),
      cf::scan_params(eqn.params, std::move(batched_body.jaxpr), int64_t(nc), int64_t(nk)));
  std::vector<BatchDim> dims = zero_where(carry);
  for (size_t i = nk; i < batched_body.out_dims.size(); ++i)
    dims.push_back(batched_body.out_dims[i] ? BatchDim(1) : std::nullopt);
  return {outs, dims};
}

// JAX's _bcast_select_n: a predicate of lower rank is broadcast along the leading axes.
Atom bcast_select_n(JaxprBuilder& b, Atom which, const std::vector<Atom>& cases) {
  const int64_t rank = which.aval().rank();
  if (rank != cases[0].aval().rank()) {
    std::vector<int64_t> idx;
    for (int64_t i = 0; i < rank; ++i) idx.push_back(i);
    which = lax_ops::broadcast_in_dim(b, which, cases[0].aval().shape, idx);
  }
  return lax_ops::select_n(b, which, cases);
}

BatchedOutputs cond(const BatchRuleArgs& a) {
  JaxprBuilder& b = a.b;
  std::vector<const Jaxpr*> branches = cf::branches_param(a.eqn);
  const size_t n_ops = a.args.size() - 1, n_out = branches[0]->outvars.size();
  if (a.dims[0]) {  // a batched index: every branch on every example, then a select
    std::vector<Atom> ops;
    for (size_t i = 0; i < a.args.size(); ++i)
      ops.push_back(bdim_at_front(b, a.args[i], a.dims[i], a.axis.size));
    const Atom index = ops.front();
    ops.erase(ops.begin());
    std::vector<std::vector<Atom>> branch_outs;
    for (size_t i = 0; i < branches.size(); ++i) {
      BatchedJaxpr bj = batch_jaxpr(*branches[i], std::vector<BatchDim>(n_ops, 0), a.axis,
                                    std::vector<BatchDim>(n_out, 0));
      const Atom pred =
          lax_ops::eq(b, index, lax_ops::const_like(b, index, static_cast<double>(i)));
      std::vector<Atom> guarded;
      for (const Atom& x : ops)  // lax.select(pred, x, stop_gradient(x))
        guarded.push_back(bcast_select_n(b, pred, {lax_ops::stop_gradient(b, x), x}));
      branch_outs.push_back(inline_jaxpr(b, bj.jaxpr, {}, guarded));
    }
    std::vector<Atom> outs;
    for (size_t k = 0; k < n_out; ++k) {
      std::vector<Atom> cases;
      for (const auto& bo : branch_outs) cases.push_back(bo[k]);
      outs.push_back(bcast_select_n(b, index, cases));
    }
    return {outs, std::vector<BatchDim>(n_out, 0)};
  }
  std::vector<bool> ops_batched;
  std::vector<Atom> args{a.args[0]};
  for (size_t i = 1; i < a.args.size(); ++i) {
    ops_batched.push_back(a.dims[i].has_value());
    args.push_back(a.dims[i] ? moveaxis(b, a.args[i], *a.dims[i], 0) : a.args[i]);
  }
  // An output is batched if it is in any branch; every branch then gives it at axis 0.
  std::vector<bool> out_batched(n_out, false);
  for (const Jaxpr* br : branches) {
    BatchedJaxpr bj = batch_jaxpr(*br, zero_where(ops_batched), a.axis,
                                  std::vector<BatchDim>(n_out, BatchDim(kZeroIfMapped)));
    for (size_t k = 0; k < n_out; ++k) out_batched[k] = out_batched[k] || bj.out_dims[k];
  }
  std::vector<Jaxpr> batched;
  std::vector<BatchDim> out_dims = zero_where(out_batched);
  for (const Jaxpr* br : branches)
    batched.push_back(batch_jaxpr(*br, zero_where(ops_batched), a.axis, out_dims).jaxpr);
  std::vector<Atom> outs =
      b.bind(*a.eqn.prim, std::move(args), cf::with_branches(a.eqn.params, std::move(batched)));
  return {outs, out_dims};
}

// JAX's _while_loop_batching_rule: the carries batched by the fixpoint; a batched predicate makes
// every carry batched at axis 0 (the loop runs until no example goes on, and a finished
// example's carries stay as they are); an unbatched one leaves the loop a loop of the batched
// body, its batched carries at the predicate's rank.
BatchedOutputs while_loop(const BatchRuleArgs& a) {
  const Eqn& eqn = a.eqn;
  const Jaxpr& cond = cf::body_param(eqn, "cond_jaxpr");
  const Jaxpr& body = cf::body_param(eqn, "body_jaxpr");
  const auto cn = static_cast<size_t>(eqn.params.get_int("cond_nconsts"));
  const auto bn = static_cast<size_t>(eqn.params.get_int("body_nconsts"));
  const size_t nk = a.args.size() - cn - bn;
  std::vector<bool> batched;
  for (BatchDim d : a.dims) batched.push_back(d.has_value());
  const std::vector<bool> cconst_bat = cf::slice(batched, 0, cn);
  const std::vector<bool> bconst_bat = cf::slice(batched, cn, bn);
  std::vector<bool> carry = cf::slice(batched, cn + bn, nk);
  cf::carry_fixpoint(
      carry,
      [&](const std::vector<bool>& carry_now) {
        std::vector<BatchDim> out;
        for (bool c : carry_now) out.push_back(c ? BatchDim(0) : BatchDim(kZeroIfMapped));
        return batch_jaxpr(body, zero_where(cf::concat(bconst_bat, carry_now)), a.axis, out);
      },
      [&](const BatchedJaxpr& r) {
        std::vector<bool> out;
        for (BatchDim d : r.out_dims) out.push_back(d.has_value());
        return out;
      });
  const bool pred_batched = batch_jaxpr(cond, zero_where(cf::concat(cconst_bat, carry)), a.axis,
                                        std::vector<BatchDim>{BatchDim(kZeroIfMapped)})
                                .out_dims[0]
                                .has_value();
  std::vector<BatchDim> carry_dims;
  const int64_t cond_rank = cond.outvars[0].aval().rank();
  for (bool c : carry)
    carry_dims.push_back(pred_batched || c ? BatchDim(pred_batched ? 0 : cond_rank) : std::nullopt);
  auto dims_of = [&](size_t from, size_t n) {
    return std::vector<BatchDim>(a.dims.begin() + static_cast<std::ptrdiff_t>(from),
                                 a.dims.begin() + static_cast<std::ptrdiff_t>(from + n));
  };
  std::vector<BatchDim> body_in = dims_of(cn, bn), cond_in = dims_of(0, cn);
  body_in.insert(body_in.end(), carry_dims.begin(), carry_dims.end());
  cond_in.insert(cond_in.end(), carry_dims.begin(), carry_dims.end());
  Jaxpr new_body = batch_jaxpr(body, body_in, a.axis, carry_dims).jaxpr;
  Jaxpr new_cond = batch_jaxpr(cond, cond_in, a.axis,
                               std::vector<BatchDim>{pred_batched ? BatchDim(0) : std::nullopt})
                       .jaxpr;
  std::vector<Atom> args(a.args.begin(), a.args.begin() + static_cast<std::ptrdiff_t>(cn + bn));
  for (size_t i = 0; i < nk; ++i) {
    const Atom& x = a.args[cn + bn + i];
    const BatchDim from = a.dims[cn + bn + i], to = carry_dims[i];
    if (!from && to)
      args.push_back(broadcast(a.b, x, a.axis.size, *to));
    else
      args.push_back(from ? moveaxis(a.b, x, *from, *to) : x);
  }
  Params p = eqn.params;
  p.set("cond_jaxpr", JaxprRef(std::make_shared<const Jaxpr>(std::move(new_cond))));
  p.set("body_jaxpr", JaxprRef(std::make_shared<const Jaxpr>(std::move(new_body))));
  std::vector<Atom> outs = a.b.bind(*eqn.prim, std::move(args), std::move(p));
  return {outs, carry_dims};
}

}  // namespace

void register_control_flow_batch_rules() {
  define_pass_rules("while").batch = while_loop;
  define_pass_rules("scan").batch = scan;
  define_pass_rules("cond").batch = cond;
}

}  // namespace cjax

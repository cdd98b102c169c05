#include "passes/memory/memory_model.h"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <unordered_map>

#include "ir/call_body.h"
#include "ir/liveness.h"
#include "ir/primitive.h"
#include "passes/inline.h"
#include "passes/memory/flops.h"
#include "passes/vjp.h"

namespace cjax::memory {
namespace {

// Live and peak bytes of simulated buffers. A Ref shares a block the way runtime::Buffer shares
// its storage: the block is freed when the last Ref to it goes away.
class Tracker {
 public:
  size_t live = 0, peak = 0, window = 0, allocated = 0;
  void add(size_t n) {
    live += n;
    allocated += n;
    peak = std::max(peak, live);
    window = std::max(window, live);
  }
  void remove(size_t n) { live -= n; }
  // Live bytes reached `bytes` for a moment (a body's peak), without a block of that size.
  void reach(size_t bytes) {
    peak = std::max(peak, bytes);
    window = std::max(window, bytes);
  }
};

class Ref {
 public:
  Ref() = default;
  Ref(Tracker& t, size_t bytes) : block_(std::make_shared<Block>(t, bytes)) {}
  size_t bytes() const { return block_ ? block_->bytes : 0; }
  bool is_null() const { return !block_; }
  const void* identity() const { return block_.get(); }

 private:
  struct Block {
    Block(Tracker& t, size_t n) : tracker(t), bytes(n) { tracker.add(n); }
    ~Block() { tracker.remove(bytes); }
    Block(const Block&) = delete;
    Block& operator=(const Block&) = delete;
    Tracker& tracker;
    size_t bytes;
  };
  std::shared_ptr<Block> block_;
};

const Jaxpr* jaxpr_param(const Params& p, std::string_view key) {
  const ParamValue* v = p.find(key);
  return v && v->is<JaxprRef>() ? v->as<JaxprRef>().get() : nullptr;
}

const std::vector<ParamValue>* branches_of(const Eqn& eqn) {
  const ParamValue* b = eqn.params.find("branches");
  if (!b) return nullptr;
  if (b->is<ParamTuple>()) return &b->as<ParamTuple>().items;
  if (b->is<ParamList>()) return &b->as<ParamList>().items;
  return nullptr;
}

// What evaluating a body does, whatever the caller's state. The caller holds the arguments for
// the whole call, so none is freed inside: the effect is the body's peak above the bytes live on
// entry, what it allocates and frees, and its outputs (an argument forwarded, or a fresh block).
struct BodyEffect {
  size_t peak_above = 0;
  size_t allocated = 0;  // besides the fresh outputs
  struct Output {
    int arg = -1;    // forwards this argument, or
    int block = -1;  // is this fresh block, or neither (nothing)
  };
  std::vector<Output> outputs;
  std::vector<size_t> block_bytes;
};
// Keyed by the body and its arguments' sizes (a null argument, a constant, counts as SIZE_MAX).
using BodyEffects = std::map<std::pair<const Jaxpr*, std::vector<size_t>>, BodyEffect>;

// Mirrors runtime::eval_jaxpr (and the control-flow kernels) on simulated buffers. A body is
// simulated once per argument sizes and its effect replayed after: a scan simulates its body
// twice, so nested scans would otherwise cost 2^depth walks.
class Simulator {
 public:
  explicit Simulator(Tracker& t) : t_(t), effects_(std::make_shared<BodyEffects>()) {}

  // `points`, for a top-level program: the most bytes live during each eqn.
  std::vector<Ref> eval(const Jaxpr& jaxpr, const std::vector<Ref>& args,
                        std::vector<size_t>* points = nullptr) {
    std::unordered_map<const void*, size_t> last_use = last_reads(jaxpr);

    std::unordered_map<const void*, Ref> env;
    auto bind = [&](const Var& v, const Ref& r) {
      if (!v.is_drop() && last_use.count(v.id())) env[v.id()] = r;
    };
    auto read = [&](const Atom& a) -> Ref {
      if (a.is_literal()) return Ref(t_, a.aval().nbytes());
      auto it = env.find(a.var().id());
      return it == env.end() ? Ref() : it->second;
    };
    for (const Var& c : jaxpr.constvars) bind(c, Ref());  // constants are not allocated
    for (size_t i = 0; i < jaxpr.invars.size() && i < args.size(); ++i)
      bind(jaxpr.invars[i], args[i]);

    for (size_t k = 0; k < jaxpr.eqns.size(); ++k) {
      const Eqn& eqn = jaxpr.eqns[k];
      // A call's body is expanded: its eqns get their own points.
      const Jaxpr* body = call_body(eqn);
      if (points && !body) t_.window = t_.live;
      std::vector<Ref> inputs;
      for (const Atom& a : eqn.inputs) inputs.push_back(read(a));
      std::vector<Ref> outs = !body    ? apply(eqn, inputs)
                              : points ? eval(*body, inputs, points)
                                       : call(*body, inputs);
      if (points && !body) points->push_back(t_.window);
      inputs.clear();
      for (const Atom& a : eqn.inputs)
        if (a.is_var() && last_use[a.var().id()] == k) env.erase(a.var().id());
      for (size_t i = 0; i < outs.size() && i < eqn.outputs.size(); ++i)
        bind(eqn.outputs[i], outs[i]);
    }
    std::vector<Ref> results;
    for (const Atom& a : jaxpr.outvars) results.push_back(read(a));
    return results;
  }

 private:
  std::vector<Ref> apply(const Eqn& eqn, const std::vector<Ref>& in) {
    const std::string_view name = eqn.prim->name;
    if (forwards_operands(name)) return in;
    if (const Jaxpr* body = call_body(eqn)) return call(*body, in);
    if (name == "scan") return scan(eqn, in);
    if (name == "while") return while_loop(eqn, in);
    if (name == "cond") return cond(eqn, in);
    std::vector<Ref> outs;
    for (const Var& o : eqn.outputs) outs.emplace_back(t_, o.aval().nbytes());
    return outs;
  }

  // Two iterations: the first reads the caller's carry, the second its own; every later one
  // repeats the second's allocations exactly.
  std::vector<Ref> scan(const Eqn& eqn, const std::vector<Ref>& in) {
    const Jaxpr* body = jaxpr_param(eqn.params, "jaxpr");
    const auto nconst = static_cast<size_t>(eqn.params.get_int("num_consts"));
    const auto ncarry = static_cast<size_t>(eqn.params.get_int("num_carry"));
    const int64_t length = eqn.params.get_int("length");
    if (!body) return {};
    std::vector<Ref> ys;
    for (size_t k = ncarry; k < eqn.outputs.size(); ++k)
      ys.emplace_back(t_, eqn.outputs[k].aval().nbytes());
    std::vector<Ref> carry(in.begin() + static_cast<ptrdiff_t>(nconst),
                           in.begin() + static_cast<ptrdiff_t>(nconst + ncarry));
    for (int64_t step = 0; step < std::min<int64_t>(length, 2); ++step) {
      std::vector<Ref> args(in.begin(), in.begin() + static_cast<ptrdiff_t>(nconst));
      args.insert(args.end(), carry.begin(), carry.end());
      for (size_t k = nconst + ncarry; k < eqn.inputs.size(); ++k) {
        ShapedArray slice = eqn.inputs[k].aval();
        slice.shape.erase(slice.shape.begin());
        args.emplace_back(t_, slice.nbytes());
      }
      std::vector<Ref> res = call(*body, args);
      args.clear();
      res.resize(ncarry);
      carry = std::move(res);
    }
    carry.insert(carry.end(), ys.begin(), ys.end());
    return carry;
  }

  // The trip count is not known statically: the model runs the condition and the body once.
  std::vector<Ref> while_loop(const Eqn& eqn, const std::vector<Ref>& in) {
    const Jaxpr* cond_j = jaxpr_param(eqn.params, "cond_jaxpr");
    const Jaxpr* body = jaxpr_param(eqn.params, "body_jaxpr");
    const auto cn = static_cast<size_t>(eqn.params.get_int("cond_nconsts"));
    const auto bn = static_cast<size_t>(eqn.params.get_int("body_nconsts"));
    std::vector<Ref> carry(in.begin() + static_cast<ptrdiff_t>(cn + bn), in.end());
    if (cond_j) {
      std::vector<Ref> args(in.begin(), in.begin() + static_cast<ptrdiff_t>(cn));
      args.insert(args.end(), carry.begin(), carry.end());
      call(*cond_j, args);
    }
    if (body) {
      std::vector<Ref> args(in.begin() + static_cast<ptrdiff_t>(cn),
                            in.begin() + static_cast<ptrdiff_t>(cn + bn));
      args.insert(args.end(), carry.begin(), carry.end());
      carry = call(*body, args);
    }
    return carry;
  }

  // The branch taken is known only at run time: the model takes the one with the highest peak.
  std::vector<Ref> cond(const Eqn& eqn, const std::vector<Ref>& in) {
    const std::vector<ParamValue>* items = branches_of(eqn);
    const std::vector<Ref> operands(in.begin() + 1, in.end());
    const Jaxpr* chosen = nullptr;
    size_t best = 0;
    if (items)
      for (const ParamValue& v : *items)
        if (v.is<JaxprRef>() && v.as<JaxprRef>()) {
          size_t p = effect(*v.as<JaxprRef>(), operands).peak_above;
          if (!chosen || p > best) chosen = v.as<JaxprRef>().get(), best = p;
        }
    if (!chosen) return {};
    return call(*chosen, operands);
  }

  Simulator(Tracker& t, std::shared_ptr<BodyEffects> effects)
      : t_(t), effects_(std::move(effects)) {}

  // Simulates `body` on arguments of `in`'s sizes in a tracker of its own, once per sizes.
  const BodyEffect& effect(const Jaxpr& body, const std::vector<Ref>& in) {
    std::vector<size_t> sizes;
    for (const Ref& r : in) sizes.push_back(r.is_null() ? SIZE_MAX : r.bytes());
    auto key = std::make_pair(&body, std::move(sizes));
    if (auto it = effects_->find(key); it != effects_->end()) return it->second;

    Tracker t;
    std::vector<Ref> args;
    for (const Ref& r : in) args.push_back(r.is_null() ? Ref() : Ref(t, r.bytes()));
    const size_t entry = t.live;
    t.peak = entry;
    std::vector<Ref> outs = Simulator(t, effects_).eval(body, args);

    BodyEffect e;
    e.peak_above = t.peak - entry;
    std::vector<const void*> blocks;
    for (const Ref& o : outs) {
      BodyEffect::Output out;
      auto same = [&](const Ref& a) { return !o.is_null() && a.identity() == o.identity(); };
      if (auto a = std::find_if(args.begin(), args.end(), same); a != args.end()) {
        out.arg = static_cast<int>(a - args.begin());
      } else if (!o.is_null()) {
        auto b = std::find(blocks.begin(), blocks.end(), o.identity());
        out.block = static_cast<int>(b - blocks.begin());
        if (b == blocks.end()) blocks.push_back(o.identity()), e.block_bytes.push_back(o.bytes());
      }
      e.outputs.push_back(out);
    }
    size_t fresh = 0;
    for (size_t b : e.block_bytes) fresh += b;
    e.allocated = t.allocated - entry - fresh;
    return effects_->emplace(std::move(key), std::move(e)).first->second;
  }

  // Evaluates a call of `body` by replaying its effect on this tracker.
  std::vector<Ref> call(const Jaxpr& body, const std::vector<Ref>& in) {
    const BodyEffect& e = effect(body, in);
    t_.reach(t_.live + e.peak_above);
    t_.allocated += e.allocated;
    std::vector<Ref> blocks;
    for (size_t b : e.block_bytes) blocks.emplace_back(t_, b);
    std::vector<Ref> outs;
    for (const BodyEffect::Output& o : e.outputs)
      outs.push_back(o.arg >= 0     ? in[static_cast<size_t>(o.arg)]
                     : o.block >= 0 ? blocks[static_cast<size_t>(o.block)]
                                    : Ref());
    return outs;
  }

  Tracker& t_;
  std::shared_ptr<BodyEffects> effects_;
};

// FLOPs of eqns that depend on no cotangent; `dep[i]`: invar i depends on one. Returns the
// FLOPs and, per outvar, whether it depends on one.
struct CtFlow {
  double flops = 0;
  std::vector<bool> out_dep;
};

// Each (body, dependence pattern) is walked once: a scan's fixed point walks its body twice, so
// without the memo nested scans would cost 2^depth walks.
class CotangentFreeFlops {
 public:
  const CtFlow& operator()(const Jaxpr& j, const std::vector<bool>& dep_in) {
    auto key = std::make_pair(&j, dep_in);
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    CtFlow r = walk(j, dep_in);
    return memo_.emplace(std::move(key), std::move(r)).first->second;
  }

 private:
  CtFlow walk(const Jaxpr& j, const std::vector<bool>& dep_in) {
    std::unordered_map<const void*, bool> dep;
    for (size_t i = 0; i < j.invars.size(); ++i)
      dep[j.invars[i].id()] = i < dep_in.size() && dep_in[i];
    auto is_dep = [&](const Atom& a) {
      if (a.is_literal()) return false;
      auto it = dep.find(a.var().id());
      return it != dep.end() && it->second;
    };
    CtFlow r;
    for (const Eqn& e : j.eqns) {
      std::vector<bool> in;
      bool any = false;
      for (const Atom& a : e.inputs) {
        in.push_back(is_dep(a));
        any = any || in.back();
      }
      std::vector<bool> out(e.outputs.size(), any);
      if (const Jaxpr* body = call_body(e); body && any) {
        CtFlow inner = (*this)(*body, in);
        r.flops += inner.flops;
        out = inner.out_dep;
        out.resize(e.outputs.size(), true);
      } else if (e.prim->name == "scan" && any) {
        const Jaxpr* body = jaxpr_param(e.params, "jaxpr");
        const auto nconst = static_cast<size_t>(e.params.get_int("num_consts"));
        const auto ncarry = static_cast<size_t>(e.params.get_int("num_carry"));
        CtFlow inner;
        for (int round = 0; body && round < 8; ++round) {  // carries: iterate to a fixed point
          inner = (*this)(*body, in);
          bool changed = false;
          for (size_t c = 0; c < ncarry && c < inner.out_dep.size(); ++c)
            if (inner.out_dep[c] && !in[nconst + c]) in[nconst + c] = true, changed = true;
          if (!changed) break;
        }
        r.flops += static_cast<double>(e.params.get_int("length")) * inner.flops;
        out = inner.out_dep;
        out.resize(e.outputs.size(), true);
      } else if (!any) {
        r.flops += eqn_flops(e);
      }
      for (size_t i = 0; i < e.outputs.size(); ++i) dep[e.outputs[i].id()] = out[i];
    }
    for (const Atom& a : j.outvars) r.out_dep.push_back(is_dep(a));
    return r;
  }

  std::map<std::pair<const Jaxpr*, std::vector<bool>>, CtFlow> memo_;
};

}  // namespace

StepModel model_step(const Jaxpr& fwd, const Jaxpr& bwd, size_t num_residuals) {
  StepModel m;
  Tracker t;
  Simulator sim(t);
  m.num_residuals = num_residuals;
  m.forward_flops = jaxpr_flops(fwd);
  m.backward_flops = jaxpr_flops(bwd);
  std::vector<bool> dep(bwd.invars.size(), false);
  for (size_t i = num_residuals; i < dep.size(); ++i) dep[i] = true;
  m.recompute_flops = CotangentFreeFlops()(bwd, dep).flops;

  std::vector<Ref> args;
  for (const Var& v : fwd.invars) {
    args.emplace_back(t, v.aval().nbytes());
    m.argument_bytes += v.aval().nbytes();
  }
  std::vector<Ref> outs = sim.eval(fwd, args, &m.live);
  m.forward_peak_bytes = t.peak;
  m.boundary = m.live.size();

  const size_t n_primal = outs.size() >= num_residuals ? outs.size() - num_residuals : 0;
  std::unordered_map<const void*, bool> is_arg;
  for (const Var& v : fwd.invars) is_arg[v.id()] = true;
  for (size_t r = n_primal; r < fwd.outvars.size(); ++r) {
    const Atom& o = fwd.outvars[r];
    m.residual_total_bytes += o.aval().nbytes();
    if (!(o.is_var() && is_arg.count(o.var().id()))) m.residual_bytes += o.aval().nbytes();
  }

  // The caller keeps the primal outputs and hands the residuals and fresh cotangents over.
  std::vector<Ref> bwd_in(outs.begin() + static_cast<ptrdiff_t>(n_primal), outs.end());
  const size_t before = t.peak;
  t.peak = t.live;
  for (size_t i = bwd_in.size(); i < bwd.invars.size(); ++i)
    bwd_in.emplace_back(t, bwd.invars[i].aval().nbytes());
  std::vector<Ref> grads = sim.eval(bwd, bwd_in, &m.live);
  m.backward_peak_bytes = t.peak;
  m.peak_bytes = std::max(before, t.peak);
  m.allocated_bytes = t.allocated;
  return m;
}

StepModel model_vjp(const Jaxpr& jaxpr) {
  VjpResult r = vjp_jaxpr(jaxpr);
  return model_step(r.fwd, r.bwd, r.num_residuals);
}

size_t model_eval_peak(const Jaxpr& jaxpr) {
  Tracker t;
  Simulator sim(t);
  std::vector<Ref> args;
  for (const Var& v : jaxpr.invars) args.emplace_back(t, v.aval().nbytes());
  sim.eval(jaxpr, args);
  return t.peak;
}

}  // namespace cjax::memory

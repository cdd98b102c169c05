#include "tests/property/properties.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <unordered_set>

#include "compiler/cpu/executable.h"
#include "ir/errors.h"
#include "ir/parse/parser.h"
#include "ir/print/printer.h"
#include "ir/rules/verify.h"
#include "passes/batching.h"
#include "passes/cse.h"
#include "passes/dce.h"
#include "passes/jvp.h"
#include "passes/memory/budget_plan.h"
#include "passes/memory/memory_model.h"
#include "passes/policies.h"
#include "passes/recompute_residuals.h"
#include "passes/remat.h"
#include "passes/vjp.h"
#include "runtime/interpreter.h"

namespace prop {

using cjax::Jaxpr;
using cjax::runtime::Buffer;
using Values = std::vector<std::vector<double>>;

namespace {

Values random_values(const std::vector<cjax::Var>& vars, std::mt19937_64& rng, double lo = -1.0,
                     double hi = 1.0) {
  std::uniform_real_distribution<double> dist(lo, hi);
  Values out;
  for (const cjax::Var& v : vars) {
    std::vector<double> x(static_cast<size_t>(v.aval().size()));
    for (double& e : x) e = dist(rng);
    out.push_back(std::move(x));
  }
  return out;
}

// One random cotangent per output of `j`.
Values random_cotangents(const Jaxpr& j, std::mt19937_64& rng) {
  std::vector<cjax::Var> outs;
  for (const cjax::Atom& a : j.outvars) outs.push_back(cjax::Var(a.aval()));
  return random_values(outs, rng);
}

// Evaluates `j` on `args` (f64 data, one vector per invar, in order) with the interpreter, or
// compiled through the MLIR back end.
Values eval(const Jaxpr& j, const Values& args, bool compiled = false) {
  if (args.size() != j.invars.size())
    throw cjax::Error(
        fmt::format("eval: {} arguments for {} invars", args.size(), j.invars.size()));
  std::vector<Buffer> bufs;
  for (size_t i = 0; i < args.size(); ++i) {
    const cjax::ShapedArray& aval = j.invars[i].aval();
    if (aval.dtype != cjax::DType::f64)
      throw cjax::Error(fmt::format("eval: invar {} is {}, not f64", i, aval.str_short()));
    bufs.push_back(Buffer::from_data<double>(aval, std::span<const double>(args[i])));
  }
  Values out;
  for (const Buffer& b : compiled ? cjax::lower::compile(j, "random program")->run(bufs)
                                  : cjax::runtime::eval_jaxpr(j, bufs))
    out.push_back(b.to_doubles());
  return out;
}

Values concat(Values a, const Values& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

Values slice(const Values& v, size_t begin, size_t end) {
  return Values(v.begin() + static_cast<std::ptrdiff_t>(begin),
                v.begin() + static_cast<std::ptrdiff_t>(end));
}

double dot(const Values& a, const Values& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t k = 0; k < a[i].size(); ++k) s += a[i][k] * b[i][k];
  return s;
}

double max_abs(const Values& v) {
  double m = 0;
  for (const auto& x : v)
    for (double e : x) m = std::max(m, std::abs(e));
  return m;
}

// "" when a and b agree within rtol (relative to the larger magnitude, at least 1) everywhere.
std::string compare(const char* what, const Values& got, const Values& want, double rtol) {
  if (got.size() != want.size())
    return fmt::format("{}: {} values, want {}", what, got.size(), want.size());
  double scale = std::max({1.0, max_abs(got), max_abs(want)});
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i].size() != want[i].size())
      return fmt::format("{}: value {} has {} elements, want {}", what, i, got[i].size(),
                         want[i].size());
    for (size_t k = 0; k < got[i].size(); ++k) {
      double g = got[i][k], w = want[i][k];
      if (!std::isfinite(w)) continue;  // an overflow in the reference: nothing to compare
      if (!(std::abs(g - w) <= rtol * scale))
        return fmt::format("{}: value {} element {}: got {:.17g}, want {:.17g}", what, i, k, g, w);
    }
  }
  return "";
}

// Whether a Var is defined (as a binder) in more than one place, across nested jaxprs. Passes
// may share Var objects between jaxprs (as JAX's do); the printer then names them alike in both,
// and a parse makes them distinct, so the names of a reprint may differ.
void collect_binders(const Jaxpr& j, std::unordered_set<const void*>& seen, bool& shared) {
  auto bind = [&](const cjax::Var& v) {
    if (!seen.insert(v.id()).second) shared = true;
  };
  for (const cjax::Var& v : j.constvars) bind(v);
  for (const cjax::Var& v : j.invars) bind(v);
  for (const cjax::Eqn& e : j.eqns) {
    for (const cjax::Var& v : e.outputs)
      if (!v.is_drop()) bind(v);
    for (const auto& [key, value] : e.params)
      if (value.is<cjax::JaxprRef>()) collect_binders(*value.as<cjax::JaxprRef>(), seen, shared);
  }
}

bool shares_vars(const Jaxpr& j) {
  std::unordered_set<const void*> seen;
  bool shared = false;
  collect_binders(j, seen, shared);
  return shared;
}

// print -> parse -> print is the identity (a fixpoint after one parse when the jaxpr shares Vars
// between nested jaxprs), and the verifier accepts the jaxpr.
std::string roundtrip(const char* what, const Jaxpr& j) {
  std::string printed = cjax::to_string(j);
  try {
    cjax::verify(j);
  } catch (const cjax::Error& e) {
    return fmt::format("{}: the verifier rejects it: {}\n{}", what, e.what(), printed);
  }
  std::string reprinted;
  try {
    reprinted = cjax::to_string(*cjax::parse_jaxpr(printed));
  } catch (const cjax::Error& e) {
    return fmt::format("{}: its printout does not parse: {}\n{}", what, e.what(), printed);
  }
  if (reprinted == printed) return "";
  if (!shares_vars(j))
    return fmt::format("{}: print -> parse -> print changed it:\n{}\n---\n{}", what, printed,
                       reprinted);
  std::string third;
  try {
    third = cjax::to_string(*cjax::parse_jaxpr(reprinted));
  } catch (const cjax::Error& e) {
    return fmt::format("{}: its reprint does not parse: {}\n{}", what, e.what(), reprinted);
  }
  if (third != reprinted)
    return fmt::format("{}: print -> parse -> print is not a fixpoint:\n{}\n---\n{}", what,
                       reprinted, third);
  return "";
}

// Forward mode refuses a custom_vjp function (as JAX does): programs with one check their
// gradient against finite differences instead.
bool has_custom_vjp(const Jaxpr& j) {
  return cjax::to_string(j).find("custom_vjp_call[") != std::string::npos;
}

Values gradient(const Jaxpr& j, const Values& x, const Values& ct);

std::string check_jvp_fd(const Jaxpr& j, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Values x = random_values(j.invars, rng), t = random_values(j.invars, rng);
  const double h = 1e-6;
  Values xp = x, xm = x;
  for (size_t i = 0; i < x.size(); ++i)
    for (size_t k = 0; k < x[i].size(); ++k) {
      xp[i][k] += h * t[i][k];
      xm[i][k] -= h * t[i][k];
    }
  Values fp = eval(j, xp), fm = eval(j, xm), fd = fp;
  for (size_t i = 0; i < fd.size(); ++i)
    for (size_t k = 0; k < fd[i].size(); ++k) fd[i][k] = (fp[i][k] - fm[i][k]) / (2 * h);
  if (has_custom_vjp(j)) {
    const Values ct = random_cotangents(j, rng);
    const Values g = gradient(j, x, ct);
    const double lhs = dot(g, t), rhs = dot(ct, fd);
    const double scale = std::max({1.0, std::abs(lhs), std::abs(rhs), max_abs(g), max_abs(fd)});
    if (!(std::abs(lhs - rhs) <= 1e-5 * scale))
      return fmt::format("<vjp(ct), t> = {:.17g} but <ct, central differences(t)> = {:.17g}", lhs,
                         rhs);
    return "";
  }
  cjax::JvpJaxpr jj = cjax::jvp_jaxpr(j, std::vector<bool>(j.invars.size(), true), true);
  Values jout = eval(jj.jaxpr, concat(x, t));
  size_t m = j.outvars.size();
  Values primal = eval(j, x);
  if (auto e = compare("jvp primal outputs vs eval", slice(jout, 0, m), primal, 1e-12); !e.empty())
    return e;
  return compare("jvp tangents vs central differences", slice(jout, m, jout.size()), fd, 1e-5);
}

std::string check_vjp_jvp(const Jaxpr& j, uint64_t seed) {
  if (has_custom_vjp(j)) return "";  // no forward mode to compare with (check_jvp_fd checks it)
  std::mt19937_64 rng(seed);
  Values x = random_values(j.invars, rng), t = random_values(j.invars, rng);
  size_t m = j.outvars.size();
  Values ct = random_cotangents(j, rng);

  cjax::JvpJaxpr jj = cjax::jvp_jaxpr(j, std::vector<bool>(j.invars.size(), true), true);
  Values jout = eval(jj.jaxpr, concat(x, t));
  Values jt = slice(jout, m, jout.size());

  cjax::VjpResult v = cjax::vjp_jaxpr(j);
  Values fwd = eval(v.fwd, x);
  if (auto e =
          compare("vjp forward outputs vs jvp primals", slice(fwd, 0, m), slice(jout, 0, m), 1e-12);
      !e.empty())
    return e;
  Values res = slice(fwd, m, fwd.size());
  Values g = eval(v.bwd, concat(res, ct));
  double lhs = dot(g, t), rhs = dot(ct, jt);
  double scale = std::max({1.0, std::abs(lhs), std::abs(rhs), max_abs(g), max_abs(jt)});
  if (!(std::abs(lhs - rhs) <= 1e-9 * scale))
    return fmt::format("<vjp(ct), t> = {:.17g} but <ct, jvp(t)> = {:.17g}", lhs, rhs);

  cjax::LinearizeResult l = cjax::linearize_jaxpr(j);
  Values lf = eval(l.fwd, x);
  Values lt = eval(l.lin, concat(slice(lf, m, lf.size()), t));
  // Outputs whose tangent is a symbolic zero are not outputs of lin.
  Values lt_full;
  size_t next = 0;
  for (size_t i = 0; i < m; ++i) {
    if (l.out_nonzero[i])
      lt_full.push_back(lt.at(next++));
    else
      lt_full.push_back(std::vector<double>(jt[i].size(), 0.0));
  }
  return compare("linearize tangents vs jvp", lt_full, jt, 1e-12);
}

// The gradient: (one cotangent per output, given) -> (cotangent per input).
Values gradient(const Jaxpr& j, const Values& x, const Values& ct) {
  cjax::VjpResult v = cjax::vjp_jaxpr(j);
  Values fwd = eval(v.fwd, x);
  return eval(v.bwd, concat(slice(fwd, j.outvars.size(), fwd.size()), ct));
}

std::string check_policies(const Jaxpr& j, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Values x = random_values(j.invars, rng);
  Values ct = random_cotangents(j, rng);
  Values plain = gradient(j, x, ct);
  for (const NamedPolicy& p : all_policies()) {
    Jaxpr c = cjax::checkpoint_jaxpr(j, p.policy);
    std::string what = fmt::format("gradient under checkpoint(policy={}) vs plain", p.name);
    if (auto e = compare(what.c_str(), gradient(c, x, ct), plain, 1e-10); !e.empty()) return e;
  }
  return "";
}

// memory_budget reaches every built-in policy's peak: the low end of its trade-off curve is at
// most each of theirs, and a budget at the smallest of theirs is met (docs/auto-remat.md).
std::string check_budget_floor(const Jaxpr& j, uint64_t) {
  if (j.eqns.empty()) return "";
  size_t floor = std::numeric_limits<size_t>::max();
  std::string lowest;
  for (const cjax::PolicyRef& p :
       {cjax::policies::everything_saveable(), cjax::policies::nothing_saveable(),
        cjax::policies::dots_saveable(), cjax::policies::dots_with_no_batch_dims_saveable()}) {
    const size_t peak = cjax::memory::model_vjp(cjax::checkpoint_jaxpr(j, p)).peak_bytes;
    if (peak < floor) floor = peak, lowest = p->repr();
  }
  const cjax::memory::PlanProblem problem = cjax::memory::plan_problem(j);
  const auto front = cjax::memory::pareto_frontier(problem.body, problem.in_unknown);
  if (front.empty() || front.front().model.peak_bytes > floor)
    return fmt::format("memory_budget's curve starts at {} bytes, above {}'s peak of {}",
                       front.empty() ? 0 : front.front().model.peak_bytes, lowest, floor);
  const size_t got =
      cjax::memory::model_vjp(cjax::checkpoint_jaxpr(j, cjax::policies::memory_budget(floor)))
          .peak_bytes;
  if (got > floor)
    return fmt::format("memory_budget({}) (the peak of {}) gave a peak of {} bytes", floor, lowest,
                       got);
  return "";
}

std::string check_roundtrip(const Jaxpr& j, uint64_t) {
  if (auto e = roundtrip("the program", j); !e.empty()) return e;
  cjax::JvpJaxpr jj = cjax::jvp_jaxpr(j, std::vector<bool>(j.invars.size(), true), true);
  if (auto e = roundtrip("jvp", jj.jaxpr); !e.empty()) return e;
  cjax::VjpResult v = cjax::vjp_jaxpr(j);
  if (auto e = roundtrip("vjp forward", v.fwd); !e.empty()) return e;
  if (auto e = roundtrip("vjp backward", v.bwd); !e.empty()) return e;
  for (const NamedPolicy& p : all_policies()) {
    Jaxpr c = cjax::checkpoint_jaxpr(j, p.policy);
    std::string what = fmt::format("checkpoint(policy={})", p.name);
    if (auto e = roundtrip(what.c_str(), c); !e.empty()) return e;
    cjax::VjpResult cv = cjax::vjp_jaxpr(c);
    if (auto e = roundtrip((what + " vjp forward").c_str(), cv.fwd); !e.empty()) return e;
    if (auto e = roundtrip((what + " vjp backward").c_str(), cv.bwd); !e.empty()) return e;
  }
  return "";
}

std::string check_verify(const Jaxpr& j, uint64_t seed) {
  auto verified = [](const char* what, const Jaxpr& out) -> std::string {
    try {
      cjax::verify(out);
    } catch (const cjax::Error& e) {
      return fmt::format("{}: the verifier rejects its output: {}\n{}", what, e.what(),
                         cjax::to_string(out));
    }
    return "";
  };
  cjax::LinearizeResult l = cjax::linearize_jaxpr(j);
  if (auto e = verified("linearize forward", l.fwd); !e.empty()) return e;
  if (auto e = verified("linearize linear", l.lin); !e.empty()) return e;
  std::mt19937_64 rng(seed);
  Values x = random_values(j.invars, rng);
  Values want = eval(j, x);
  const std::pair<const char*, Jaxpr (*)(const Jaxpr&)> passes[] = {
      {"dce", [](const Jaxpr& a) { return cjax::dce(a); }},
      {"cse", [](const Jaxpr& a) { return cjax::cse(a); }},
  };
  for (const auto& [name, pass] : passes) {
    for (const Jaxpr* in : std::initializer_list<const Jaxpr*>{&j, &l.fwd}) {
      Jaxpr out = pass(*in);
      if (auto e = verified(name, out); !e.empty()) return e;
      if (in == &j) {
        std::string what = fmt::format("values after {}", name);
        if (auto e = compare(what.c_str(), eval(out, x), want, 1e-12); !e.empty()) return e;
      }
    }
  }
  return "";
}

// Compiling costs tens of milliseconds a program, so a fifth of the seeds check it.
std::string check_compiled(const Jaxpr& j, uint64_t seed) {
  if (seed % 5 != 0) return "";
  std::mt19937_64 rng(seed);
  Values x = random_values(j.invars, rng);
  if (auto e = compare("compiled program", eval(j, x, true), eval(j, x), 1e-12); !e.empty())
    return e;
  Values ct = random_cotangents(j, rng);
  const NamedPolicy& policy = all_policies()[seed / 5 % all_policies().size()];
  cjax::VjpResult v = cjax::vjp_jaxpr(cjax::checkpoint_jaxpr(j, policy.policy));
  Values fwd = eval(v.fwd, x);
  Values bwd_in = concat(slice(fwd, j.outvars.size(), fwd.size()), ct);
  const std::string what = fmt::format("compiled backward program (policy {})", policy.name);
  return compare(what.c_str(), eval(v.bwd, bwd_in, true), eval(v.bwd, bwd_in), 1e-12);
}

std::string check_recompute(const Jaxpr& j, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Values x = random_values(j.invars, rng);
  Values ct = random_cotangents(j, rng);
  cjax::VjpResult v = cjax::vjp_jaxpr(j);
  cjax::ResidualSplit s = cjax::recompute_cheap_residuals(v.fwd, v.bwd, v.num_residuals);
  for (const auto& [what, program] :
       {std::pair{"recomputing forward", &s.fwd}, std::pair{"recomputing backward", &s.bwd}}) {
    try {
      cjax::verify(*program);
    } catch (const cjax::Error& e) {
      return fmt::format("{}: the verifier rejects it: {}\n{}", what, e.what(),
                         cjax::to_string(*program));
    }
  }
  if (s.num_residuals > v.num_residuals + j.invars.size())
    return fmt::format("{} residuals from {}", s.num_residuals, v.num_residuals);
  const size_t m = j.outvars.size();
  Values fwd = eval(v.fwd, x), split_fwd = eval(s.fwd, x);
  if (auto e = compare("outputs with residuals recomputed", slice(split_fwd, 0, m),
                       slice(fwd, 0, m), 0.0);
      !e.empty())
    return e;
  Values want = eval(v.bwd, concat(slice(fwd, m, fwd.size()), ct));
  Values got = eval(s.bwd, concat(slice(split_fwd, m, split_fwd.size()), ct));
  return compare("gradient with residuals recomputed", got, want, 0.0);
}

// Element block of example `b` of `x` (row-major `shape`, batched along `axis`).
std::vector<double> example_of(const std::vector<double>& x, const cjax::Shape& shape, size_t axis,
                               int64_t b) {
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t n = shape[axis];
  std::vector<double> out;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i)
      out.push_back(x[static_cast<size_t>((o * n + b) * inner + i)]);
  return out;
}

// vmap: the program batched (each input batched along a random axis or not, at least one) gives
// the unbatched program's values for every example, stacked along axis 0; compiled too, every
// seventh seed.
std::string check_vmap(const Jaxpr& j, uint64_t seed) {
  if (j.invars.empty()) return "";
  std::mt19937_64 rng(seed);
  const int64_t size = 2 + static_cast<int64_t>(rng() % 2);
  std::vector<cjax::BatchDim> dims;
  std::vector<cjax::Var> batched_vars;
  for (const cjax::Var& v : j.invars) {
    cjax::BatchDim d;
    if (rng() % 3 != 0)
      d = static_cast<int64_t>(rng() % static_cast<uint64_t>(v.aval().rank() + 1));
    dims.push_back(d);
    cjax::Shape shape = v.aval().shape;
    if (d) shape.insert(shape.begin() + *d, size);
    batched_vars.emplace_back(cjax::ShapedArray(v.aval().dtype, shape));
  }
  if (std::none_of(dims.begin(), dims.end(), [](cjax::BatchDim d) { return d.has_value(); })) {
    dims[0] = 0;
    cjax::Shape shape = j.invars[0].aval().shape;
    shape.insert(shape.begin(), size);
    batched_vars[0] = cjax::Var(cjax::ShapedArray(cjax::DType::f64, shape));
  }
  const Values x = random_values(batched_vars, rng);
  const cjax::BatchedJaxpr b =
      cjax::batch_jaxpr(j, dims, cjax::BatchAxis{size, ""}, std::vector<cjax::BatchDim>{0});
  Values want(j.outvars.size());
  for (int64_t e = 0; e < size; ++e) {
    Values one;
    for (size_t i = 0; i < x.size(); ++i)
      one.push_back(
          dims[i] ? example_of(x[i], batched_vars[i].aval().shape, static_cast<size_t>(*dims[i]), e)
                  : x[i]);
    Values out = eval(j, one);
    for (size_t k = 0; k < out.size(); ++k)
      want[k].insert(want[k].end(), out[k].begin(), out[k].end());
  }
  if (auto e = compare("batched program vs a loop of the program", eval(b.jaxpr, x), want, 1e-12);
      !e.empty())
    return e + "\n" + cjax::to_string(b.jaxpr);
  if (seed % 7 != 0) return "";
  return compare("compiled batched program", eval(b.jaxpr, x, true), want, 1e-12);
}

}  // namespace

const std::vector<Property>& properties() {
  static const std::vector<Property> list = {
      {"jvp_fd", check_jvp_fd},       {"vjp_jvp", check_vjp_jvp},
      {"policies", check_policies},   {"roundtrip", check_roundtrip},
      {"verify", check_verify},       {"compiled", check_compiled},
      {"recompute", check_recompute}, {"budget_floor", check_budget_floor},
      {"vmap", check_vmap},
  };
  return list;
}

std::string check_program(const Property& prop, const Program& p) {
  Jaxpr j;
  try {
    j = trace(p);
  } catch (const std::exception& e) {
    return fmt::format("tracing threw: {}", e.what());
  }
  try {
    return prop.check(j, p.seed ^ 0x9e3779b97f4a7c15ull);
  } catch (const std::exception& e) {
    return fmt::format("threw: {}\n{}", e.what(), cjax::to_string(j));
  }
}

Program shrink(const Property& prop, Program p, int budget) {
  bool progress = true;
  while (progress && budget > 0) {
    progress = false;
    for (Program& q : shrink_candidates(p)) {
      if (--budget < 0) break;
      if (!check_program(prop, q).empty()) {
        p = std::move(q);
        progress = true;
        break;
      }
    }
  }
  return p;
}

}  // namespace prop

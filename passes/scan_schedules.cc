#include "passes/scan_schedules.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>

#include "ir/errors.h"
#include "passes/builder.h"
#include "passes/control_flow/cf_util.h"
#include "passes/inline.h"
#include "passes/lax/lax.h"
#include "passes/memory/memory_model.h"
#include "passes/remat.h"
#include "passes/vjp.h"

namespace cjax {
namespace {

using Atoms = std::vector<Atom>;

constexpr int64_t kSaturated = std::numeric_limits<int64_t>::max() / 4;
// Checkpoints a binomial schedule may nest (each is two levels of jaxpr: a remat2 and the scan
// inside it), well inside the parser's and printer's nesting limit.
constexpr int64_t kMaxBinomialDepth = 40;

// C(s + r, s), saturating at kSaturated.
int64_t beta(int64_t s, int64_t r) {
  if (s < 0 || r < 0) return 0;
  int64_t c = 1;
  const int64_t k = std::min(s, r);
  for (int64_t i = 1; i <= k; ++i) {
    const int64_t factor = s + r - k + i;
    if (c > kSaturated / factor) return kSaturated;
    c = c * factor / i;  // exact: c·factor is i·C(s + r - k + i, i)
  }
  return c;
}

// binomial_extra_steps, with no snapshots meaning "only a single step is possible".
int64_t extra_steps(int64_t steps, int64_t snapshots) {
  if (steps <= 1) return 0;
  if (snapshots <= 0) return kSaturated;
  return binomial_extra_steps(steps, snapshots);
}

// Griewank's optimal split of `steps` (> snapshots + 1) into a head, reversed with all
// `snapshots` after the tail has been reversed with one fewer: the head's length.
int64_t binomial_split(int64_t steps, int64_t snapshots) {
  const int64_t best = extra_steps(steps, snapshots);
  auto cost = [&](int64_t m) {
    return m + extra_steps(steps - m, snapshots - 1) + extra_steps(m, snapshots);
  };
  // The optimal heads lie between C(s + r - 2, s) and C(s + r - 1, s); search around them first.
  const int64_t r = binomial_repetitions(steps, snapshots);
  const int64_t lo = std::max<int64_t>(1, beta(snapshots, r - 2) - 2);
  const int64_t hi = std::min<int64_t>(steps - 1, beta(snapshots, r - 1) + 2);
  for (int64_t m = hi; m >= lo; --m)
    if (cost(m) == best) return m;
  for (int64_t m = steps - 1; m >= 1; --m)
    if (cost(m) == best) return m;
  throw Error(
      fmt::format("scan: no binomial split of {} steps with {} snapshots", steps, snapshots));
}

// How many checkpoints a binomial schedule of `steps` nests.
int64_t binomial_depth(int64_t steps, int64_t snapshots,
                       std::map<std::pair<int64_t, int64_t>, int64_t>& memo) {
  if (steps <= snapshots + 1) return 0;
  auto key = std::pair{steps, snapshots};
  if (auto it = memo.find(key); it != memo.end()) return it->second;
  const int64_t m = binomial_split(steps, snapshots);
  const int64_t d = std::max(1 + binomial_depth(m, snapshots, memo),
                             binomial_depth(steps - m, snapshots - 1, memo));
  memo[key] = d;
  return d;
}

// Steps [a, a + length) of the loop (in index order), the unit every schedule is built from.
struct Piece {
  int64_t length;
  // Emits the piece's steps on its slices of xs; returns the carries then its ys.
  std::function<Atoms(JaxprBuilder&, const Atoms& consts, const Atoms& carry, const Atoms& xs)> run;
};

class Scheduler {
 public:
  explicit Scheduler(const Eqn& eqn)
      : eqn_(eqn),
        body_(*eqn.params.get_jaxpr("jaxpr")),
        nc_(static_cast<size_t>(eqn.params.get_int("num_consts"))),
        nk_(static_cast<size_t>(eqn.params.get_int("num_carry"))),
        reverse_(eqn.params.get_bool("reverse")) {
    if (nc_ + nk_ > body_.invars.size() || nk_ > body_.outvars.size())
      throw Error("scan: num_consts/num_carry do not fit the body");
    ny_ = body_.outvars.size() - nk_;
  }

  Jaxpr run(const ScanSchedule& s) {
    JaxprBuilder b;
    b.set_source(eqn_.source);
    Jaxpr out;
    Atoms consts, carry, xs;
    for (size_t i = 0; i < eqn_.inputs.size(); ++i) {
      Var v(eqn_.inputs[i].aval());
      out.invars.push_back(v);
      (i < nc_ ? consts : i < nc_ + nk_ ? carry : xs).push_back(v);
    }
    const int64_t length = eqn_.params.get_int("length");
    Atoms result;
    switch (s.kind) {
      case ScanSchedule::Kind::none:
        result = scan(b, body_, consts, carry, xs, length);
        break;
      case ScanSchedule::Kind::every_step:
        result = every_step(b, consts, carry, xs, length);
        break;
      case ScanSchedule::Kind::nested:
        if (s.levels < 1)
          throw UsageError(fmt::format("scan: nested({}) needs at least one level", s.levels));
        result = nested(b, consts, carry, xs, length, s.levels);
        break;
      case ScanSchedule::Kind::binomial: {
        if (s.snapshots < 1)
          throw UsageError(
              fmt::format("scan: binomial({}) needs at least one snapshot", s.snapshots));
        std::map<std::pair<int64_t, int64_t>, int64_t> memo;
        if (const int64_t d = binomial_depth(length, s.snapshots, memo); d > kMaxBinomialDepth)
          throw UsageError(fmt::format(
              "scan: binomial({}) over {} steps nests {} checkpoints (at most {}); give it more "
              "snapshots",
              s.snapshots, length, d, kMaxBinomialDepth));
        result = binomial(b, consts, carry, xs, length, s.snapshots);
        break;
      }
      case ScanSchedule::Kind::memory_budget:
        throw Error("scan: memory_budget is chosen before scheduling");
    }
    return b.build(out.invars, result);
  }

 private:
  // One scan eqn over `body` (the loop's own, or one of chunks).
  Atoms scan(JaxprBuilder& b, const Jaxpr& body, const Atoms& consts, const Atoms& carry,
             const Atoms& xs, int64_t length) {
    Params p = cf::scan_params(eqn_.params, body, static_cast<int64_t>(nc_),
                               static_cast<int64_t>(nk_), reverse_);
    p.set("length", length);
    std::vector<Var> outs = b.emit("scan", cf::concat(cf::concat(consts, carry), xs), p);
    return Atoms(outs.begin(), outs.end());
  }

  Atoms every_step(JaxprBuilder& b, const Atoms& consts, const Atoms& carry, const Atoms& xs,
                   int64_t length) {
    if (!remat_body_) remat_body_ = checkpoint_jaxpr(body_, nullptr, /*prevent_cse=*/true);
    return scan(b, *remat_body_, consts, carry, xs, length);
  }

  // A range's jaxpr, (consts, carries, xs) -> (carries, ys), checkpointed: one remat2 eqn.
  Atoms checkpointed(JaxprBuilder& b, const Atoms& consts, const Atoms& carry, const Atoms& xs,
                     const Jaxpr& range) {
    Jaxpr c = checkpoint_jaxpr(range, nullptr, /*prevent_cse=*/true);
    std::vector<Var> outs =
        b.emit("remat2", cf::concat(cf::concat(consts, carry), xs), c.eqns.at(0).params);
    return Atoms(outs.begin(), outs.end());
  }

  // A jaxpr over fresh inputs shaped like (consts, carry, xs with leading length `length`),
  // whose eqns `steps` emits.
  Jaxpr range_jaxpr(
      const Atoms& consts, const Atoms& carry, const Atoms& xs, int64_t length,
      const std::function<Atoms(JaxprBuilder&, const Atoms&, const Atoms&, const Atoms&)>& steps) {
    JaxprBuilder sub;
    sub.set_source(eqn_.source);
    std::vector<Var> invars;
    auto fresh = [&](const Atoms& from, std::optional<int64_t> lead) {
      Atoms vs;
      for (const Atom& a : from) {
        ShapedArray aval = a.aval();
        if (lead) aval.shape[0] = *lead;
        Var v(aval);
        invars.push_back(v);
        vs.push_back(v);
      }
      return vs;
    };
    Atoms c = fresh(consts, std::nullopt), k = fresh(carry, std::nullopt), x = fresh(xs, length);
    Atoms outs = steps(sub, c, k, x);
    return sub.build(invars, outs);
  }

  // Runs `pieces` (in the order the loop visits them, so last index first when reversed) on
  // their slices of xs, threading the carry; ys come back in index order.
  Atoms sequence(JaxprBuilder& b, const Atoms& consts, Atoms carry, const Atoms& xs, int64_t length,
                 const std::vector<Piece>& pieces) {
    std::vector<std::pair<int64_t, Atoms>> ys;  // (first index, the piece's ys)
    int64_t done = 0;
    for (const Piece& p : pieces) {
      const int64_t a = reverse_ ? length - done - p.length : done;
      done += p.length;
      Atoms part;
      for (const Atom& x : xs) {
        if (p.length == length) {
          part.push_back(x);
          continue;
        }
        Shape start(x.aval().shape.size(), 0), limit = x.aval().shape;
        start[0] = a;
        limit[0] = a + p.length;
        part.push_back(lax_ops::slice(b, x, start, limit));
      }
      Atoms outs = p.run(b, consts, carry, part);
      carry.assign(outs.begin(), outs.begin() + static_cast<ptrdiff_t>(nk_));
      ys.emplace_back(a, Atoms(outs.begin() + static_cast<ptrdiff_t>(nk_), outs.end()));
    }
    std::sort(ys.begin(), ys.end(), [](const auto& l, const auto& r) { return l.first < r.first; });
    Atoms result = carry;
    for (size_t i = 0; i < ny_; ++i) {
      Atoms parts;
      for (const auto& piece : ys) parts.push_back(piece.second[i]);
      result.push_back(lax_ops::concatenate(b, parts, 0));
    }
    return result;
  }

  Atoms nested(JaxprBuilder& b, const Atoms& consts, const Atoms& carry, const Atoms& xs,
               int64_t length, int levels) {
    if (levels <= 1 || length <= 1) return every_step(b, consts, carry, xs, length);
    // About length^(1/levels) chunks, each of `chunk` steps nested one level less deep.
    const auto per_level =
        static_cast<int64_t>(std::ceil(std::pow(static_cast<double>(length), 1.0 / levels) - 1e-9));
    const int64_t chunk = (length + per_level - 1) / per_level;
    const int64_t chunks = length / chunk, rest = length - chunks * chunk;
    if (chunks <= 1) return nested(b, consts, carry, xs, length, levels - 1);
    Piece main{chunks * chunk, [&, chunk, chunks, levels](JaxprBuilder& e, const Atoms& c,
                                                          const Atoms& k, const Atoms& x) {
                 Atoms stacked;
                 for (const Atom& xi : x) {
                   Shape s = xi.aval().shape;
                   s[0] = chunk;
                   s.insert(s.begin(), chunks);
                   stacked.push_back(lax_ops::reshape(e, xi, s));
                 }
                 Jaxpr range = range_jaxpr(
                     c, k, x, chunk,
                     [&](JaxprBuilder& in, const Atoms& rc, const Atoms& rk, const Atoms& rx) {
                       return nested(in, rc, rk, rx, chunk, levels - 1);
                     });
                 Jaxpr body = checkpoint_jaxpr(range, nullptr, /*prevent_cse=*/true);
                 Atoms outs = scan(e, body, c, k, stacked, chunks);
                 for (size_t i = nk_; i < outs.size(); ++i) {
                   Shape s = outs[i].aval().shape;
                   s.erase(s.begin());
                   s[0] = chunks * chunk;
                   outs[i] = lax_ops::reshape(e, outs[i], s);
                 }
                 return outs;
               }};
    std::vector<Piece> pieces{main};
    if (rest > 0)
      pieces.push_back({rest, [&, rest, levels](JaxprBuilder& e, const Atoms& c, const Atoms& k,
                                                const Atoms& x) {
                          return nested(e, c, k, x, rest, levels - 1);
                        }});
    if (reverse_) std::reverse(pieces.begin(), pieces.end());
    return sequence(b, consts, carry, xs, length, pieces);
  }

  Atoms binomial(JaxprBuilder& b, const Atoms& consts, const Atoms& carry, const Atoms& xs,
                 int64_t length, int64_t snapshots) {
    if (length == 0) return scan(b, body_, consts, carry, xs, 0);
    std::vector<Piece> pieces;
    if (length <= snapshots + 1) {
      // Few enough steps to store every carry but the last: each step before the last is
      // checkpointed, the last is reversed at once.
      if (length > 1)
        pieces.push_back(
            {length - 1, [&](JaxprBuilder& e, const Atoms& c, const Atoms& k, const Atoms& x) {
               return every_step(e, c, k, x, length - 1);
             }});
      pieces.push_back({1, [&](JaxprBuilder& e, const Atoms& c, const Atoms& k, const Atoms& x) {
                          return scan(e, body_, c, k, x, 1);
                        }});
    } else {
      const int64_t head = binomial_split(length, snapshots);
      pieces.push_back({head, [&, head, snapshots](JaxprBuilder& e, const Atoms& c, const Atoms& k,
                                                   const Atoms& x) {
                          return checkpointed(e, c, k, x, binomial_range(c, k, x, head, snapshots));
                        }});
      pieces.push_back({length - head, [&, head, snapshots](JaxprBuilder& e, const Atoms& c,
                                                            const Atoms& k, const Atoms& x) {
                          return binomial(e, c, k, x, length - head, snapshots - 1);
                        }});
    }
    return sequence(b, consts, carry, xs, length, pieces);
  }

  // The jaxpr of a binomial range of `length` steps, built once per (length, snapshots): ranges
  // of the same size share it.
  const Jaxpr& binomial_range(const Atoms& consts, const Atoms& carry, const Atoms& xs,
                              int64_t length, int64_t snapshots) {
    auto key = std::pair{length, snapshots};
    auto it = ranges_.find(key);
    if (it == ranges_.end())
      it = ranges_
               .emplace(key, range_jaxpr(consts, carry, xs, length,
                                         [&](JaxprBuilder& in, const Atoms& c, const Atoms& k,
                                             const Atoms& x) {
                                           return binomial(in, c, k, x, length, snapshots);
                                         }))
               .first;
    return it->second;
  }

  const Eqn& eqn_;
  const Jaxpr& body_;
  size_t nc_, nk_, ny_ = 0;
  bool reverse_;
  std::optional<Jaxpr> remat_body_;
  std::map<std::pair<int64_t, int64_t>, Jaxpr> ranges_;
};

// The candidates memory_budget chooses among, from the least recomputation to the most.
std::vector<ScanSchedule> budget_candidates(int64_t length) {
  std::vector<ScanSchedule> c{scan_schedules::none(), scan_schedules::every_step()};
  for (int levels = 2; levels <= 4; ++levels) c.push_back(scan_schedules::nested(levels));
  for (int s : {64, 32, 16, 8, 4, 2})
    if (s + 1 < length) c.push_back(scan_schedules::binomial(s));
  return c;
}

}  // namespace

int64_t binomial_repetitions(int64_t steps, int64_t snapshots) {
  if (snapshots < 1) throw UsageError("scan: a binomial schedule needs at least one snapshot");
  int64_t r = 0;
  while (beta(snapshots, r) < steps) ++r;
  return r;
}

int64_t binomial_extra_steps(int64_t steps, int64_t snapshots) {
  if (steps <= 1) return 0;
  const int64_t r = binomial_repetitions(steps, snapshots);
  return r * steps - beta(snapshots + 1, r - 1);
}

std::string ScanSchedule::str() const {
  switch (kind) {
    case Kind::none:
      return "none";
    case Kind::every_step:
      return "every_step";
    case Kind::nested:
      return fmt::format("nested({})", levels);
    case Kind::binomial:
      return fmt::format("binomial({})", snapshots);
    case Kind::memory_budget:
      return fmt::format("memory_budget({})", budget_bytes);
  }
  return "none";
}

ScanSchedule parse_scan_schedule(const std::string& text) {
  auto bad = [&]() {
    return UsageError(fmt::format(
        "scan: unknown checkpoint schedule '{}': expected none, every_step, nested(LEVELS), "
        "binomial(SNAPSHOTS) or memory_budget(BYTES)",
        text));
  };
  if (text == "none") return scan_schedules::none();
  if (text == "every_step") return scan_schedules::every_step();
  const size_t open = text.find('(');
  if (open == std::string::npos || text.back() != ')') throw bad();
  const std::string name = text.substr(0, open);
  const std::string arg = text.substr(open + 1, text.size() - open - 2);
  int64_t n = 0;
  auto [end, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), n);
  if (ec != std::errc() || end != arg.data() + arg.size() || n < 1) throw bad();
  if (name == "nested" && n <= 64) return scan_schedules::nested(static_cast<int>(n));
  if (name == "binomial" && n <= (1 << 20)) return scan_schedules::binomial(static_cast<int>(n));
  if (name == "memory_budget") return scan_schedules::memory_budget(static_cast<size_t>(n));
  throw bad();
}

Jaxpr schedule_scans(const Jaxpr& jaxpr, const ScanSchedule& schedule) {
  JaxprBuilder b;
  std::unordered_map<Var, Atom, VarHash> renamed;
  auto sub = [&](const Atom& a) -> Atom {
    if (a.is_var())
      if (auto it = renamed.find(a.var()); it != renamed.end()) return it->second;
    return a;
  };
  for (const Eqn& e : jaxpr.eqns) {
    Eqn copy = e;
    for (Atom& in : copy.inputs) in = sub(in);
    if (e.prim->name != "scan") {
      b.append(std::move(copy));
      continue;
    }
    b.set_source(e.source);
    const std::vector<Atom> outs = inline_jaxpr(b, schedule_scan(copy, schedule), {}, copy.inputs);
    for (size_t i = 0; i < e.outputs.size(); ++i) renamed.emplace(e.outputs[i], outs[i]);
  }
  std::vector<Atom> outvars;
  for (const Atom& o : jaxpr.outvars) outvars.push_back(sub(o));
  Jaxpr out = b.build(jaxpr.invars, outvars, jaxpr.constvars, jaxpr.consts);
  out.debug = jaxpr.debug;
  return out;
}

std::vector<ScanSchedule> schedules_to_compare(int64_t length) {
  std::vector<ScanSchedule> out{scan_schedules::every_step(), scan_schedules::nested(2),
                                scan_schedules::nested(3)};
  for (int s : {8, 4, 2})
    if (s + 1 < length) out.push_back(scan_schedules::binomial(s));
  return out;
}

Jaxpr schedule_scan(const Eqn& scan, const ScanSchedule& schedule) {
  if (scan.prim->name != "scan")
    throw Error(fmt::format("schedule_scan: expected a scan eqn, got {}", scan.prim->name));
  if (schedule.kind != ScanSchedule::Kind::memory_budget) return Scheduler(scan).run(schedule);
  // The schedule with the least recomputation whose gradient's modelled peak fits.
  std::optional<std::pair<double, Jaxpr>> best;
  size_t smallest = std::numeric_limits<size_t>::max();
  std::string smallest_name;
  for (const ScanSchedule& s : budget_candidates(scan.params.get_int("length"))) {
    Jaxpr j = Scheduler(scan).run(s);
    const memory::StepModel m = memory::model_vjp(j);
    if (m.peak_bytes < smallest) {
      smallest = m.peak_bytes;
      smallest_name = s.str();
    }
    if (m.peak_bytes <= schedule.budget_bytes && (!best || m.recompute_flops < best->first))
      best.emplace(m.recompute_flops, std::move(j));
  }
  if (!best)
    throw UsageError(fmt::format(
        "scan: no checkpoint schedule fits memory_budget({}): the smallest peak is {} bytes, "
        "with {}",
        schedule.budget_bytes, smallest, smallest_name));
  return std::move(best->second);
}

}  // namespace cjax

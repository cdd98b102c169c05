#include "passes/scan_residuals.h"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/primitive.h"
#include "passes/control_flow/cf_util.h"
#include "passes/dce.h"
#include "passes/recompute_residuals.h"

namespace cjax {
namespace {

struct ScanShape {
  size_t consts, carry;
  int64_t length;
};

ScanShape shape_of(const Eqn& e) {
  return {static_cast<size_t>(e.params.get_int("num_consts")),
          static_cast<size_t>(e.params.get_int("num_carry")), e.params.get_int("length")};
}

// Where each variable of the program is read: (eqn index, operand position); outvars as
// eqn index = program size.
using Reads = std::unordered_map<const void*, std::vector<std::pair<size_t, size_t>>>;

Reads reads_of(const Jaxpr& j) {
  Reads reads;
  for (size_t i = 0; i < j.eqns.size(); ++i)
    for (size_t k = 0; k < j.eqns[i].inputs.size(); ++k)
      if (j.eqns[i].inputs[k].is_var()) reads[j.eqns[i].inputs[k].var().id()].push_back({i, k});
  for (size_t k = 0; k < j.outvars.size(); ++k)
    if (j.outvars[k].is_var()) reads[j.outvars[k].var().id()].push_back({j.eqns.size(), k});
  return reads;
}

// The forward scan eqn `fi` and the backward scan eqn `bi` rewritten, or nothing when no
// residual between them is worth recomputing.
std::optional<std::pair<Eqn, Eqn>> split_pair(const Jaxpr& program, const Reads& reads, size_t fi,
                                              size_t bi) {
  const Eqn& fwd = program.eqns[fi];
  const Eqn& bwd = program.eqns[bi];
  const ScanShape fs = shape_of(fwd), bs = shape_of(bwd);
  if (fs.length != bs.length) return std::nullopt;
  const Jaxpr& F = cf::body_param(fwd, "jaxpr");
  const Jaxpr& B = cf::body_param(bwd, "jaxpr");

  // Stacked outputs of the forward scan read exactly once, as a scanned-over input of `bwd`.
  std::vector<size_t> res_out;   // forward ys index (into fwd.outputs, past the carry)
  std::vector<size_t> res_xpos;  // the backward operand position reading it
  for (size_t o = fs.carry; o < fwd.outputs.size(); ++o) {
    auto it = reads.find(fwd.outputs[o].id());
    if (it == reads.end() || it->second.size() != 1) continue;
    const auto [eqn, pos] = it->second[0];
    if (eqn != bi || pos < bs.consts + bs.carry) continue;
    res_out.push_back(o);
    res_xpos.push_back(pos);
  }
  if (res_out.empty()) return std::nullopt;

  // The two bodies as recompute_cheap_residuals sees a vjp: `fwd'` returns the residuals,
  // `bwd'` takes them first.
  const size_t R = res_out.size();
  Jaxpr fwd_view = F;
  fwd_view.outvars.clear();
  for (size_t o : res_out) fwd_view.outvars.push_back(F.outvars[o]);
  Jaxpr bwd_view = B;
  bwd_view.invars.clear();
  std::unordered_set<size_t> res_positions(res_xpos.begin(), res_xpos.end());
  for (size_t p : res_xpos) bwd_view.invars.push_back(B.invars[p]);
  for (size_t p = 0; p < B.invars.size(); ++p)
    if (!res_positions.count(p)) bwd_view.invars.push_back(B.invars[p]);

  // A forward body input the recomputation may read: a constant or a scanned-over slice (its
  // outer value can be handed to the backward scan), not the carry.
  std::unordered_map<const void*, size_t> input_index;
  for (size_t i = 0; i < F.invars.size(); ++i) input_index[F.invars[i].id()] = i;
  auto available = [&](const Var& v) {
    const size_t i = input_index.at(v.id());
    return i < fs.consts || i >= fs.consts + fs.carry;
  };
  ResidualSplit split = recompute_cheap_residuals(fwd_view, bwd_view, R, available);
  if (split.recomputed == 0) return std::nullopt;

  // split.bwd's invars: the kept residuals, then one per forward input read (split.fwd's
  // trailing outvars say which), then the rest of B's invars in their order.
  const size_t kept = R - split.recomputed;
  const size_t n_args = split.num_residuals - kept;
  std::vector<Var> new_consts_in, new_xs_in;  // the backward body's new invars
  std::vector<Atom> new_consts_outer, new_xs_outer;
  // An input the backward scan already takes (a constant both scans read, the same scanned-over
  // array) is read from there.
  std::unordered_map<const void*, Atom> rename;
  auto existing = [&](const Atom& outer, size_t from, size_t to) -> std::optional<Var> {
    if (!outer.is_var()) return std::nullopt;
    for (size_t p = from; p < to; ++p)
      if (bwd.inputs[p].is_var() && bwd.inputs[p].var() == outer.var() && !res_positions.count(p))
        return B.invars[p];
    return std::nullopt;
  };
  for (size_t a = 0; a < n_args; ++a) {
    const Atom& arg = split.fwd.outvars[kept + a];
    const size_t i = input_index.at(arg.var().id());
    const Var& body_var = split.bwd.invars[kept + a];
    const bool is_const = i < fs.consts;
    const std::optional<Var> there =
        is_const ? existing(fwd.inputs[i], 0, bs.consts)
                 : existing(fwd.inputs[i], bs.consts + bs.carry, bwd.inputs.size());
    if (there) {
      rename.emplace(body_var.id(), *there);
      continue;
    }
    if (is_const) {
      new_consts_in.push_back(body_var);
      new_consts_outer.push_back(fwd.inputs[i]);
    } else {
      new_xs_in.push_back(body_var);
      new_xs_outer.push_back(fwd.inputs[i]);
    }
  }
  std::unordered_set<size_t> dropped_positions;
  for (size_t r = 0; r < R; ++r)
    if (split.dropped[r]) dropped_positions.insert(res_xpos[r]);

  // The backward scan: new constants first, then its own operands less the dropped stacks, then
  // the new scanned-over inputs.
  Jaxpr new_b = split.bwd;
  for (Eqn& e : new_b.eqns)
    for (Atom& in : e.inputs)
      if (in.is_var())
        if (auto it = rename.find(in.var().id()); it != rename.end()) in = it->second;
  for (Atom& out : new_b.outvars)
    if (out.is_var())
      if (auto it = rename.find(out.var().id()); it != rename.end()) out = it->second;
  new_b.invars = new_consts_in;
  std::vector<Atom> b_inputs = new_consts_outer;
  for (size_t p = 0; p < B.invars.size(); ++p) {
    if (dropped_positions.count(p)) continue;
    new_b.invars.push_back(B.invars[p]);
    b_inputs.push_back(bwd.inputs[p]);
  }
  new_b.invars.insert(new_b.invars.end(), new_xs_in.begin(), new_xs_in.end());
  b_inputs.insert(b_inputs.end(), new_xs_outer.begin(), new_xs_outer.end());
  Eqn b = bwd;
  b.inputs = std::move(b_inputs);
  b.params = cf::scan_params(bwd.params, std::move(new_b),
                             static_cast<int64_t>(bs.consts + new_consts_in.size()),
                             static_cast<int64_t>(bs.carry));

  // The forward scan: its body no longer returns the dropped stacks.
  std::unordered_set<size_t> dropped_outputs;
  for (size_t r = 0; r < R; ++r)
    if (split.dropped[r]) dropped_outputs.insert(res_out[r]);
  Jaxpr new_f = F;
  new_f.outvars.clear();
  Eqn f = fwd;
  f.outputs.clear();
  for (size_t o = 0; o < fwd.outputs.size(); ++o) {
    if (dropped_outputs.count(o)) continue;
    new_f.outvars.push_back(F.outvars[o]);
    f.outputs.push_back(fwd.outputs[o]);
  }
  new_f = dce(new_f);
  f.params = cf::scan_params(fwd.params, std::move(new_f), static_cast<int64_t>(fs.consts),
                             static_cast<int64_t>(fs.carry));
  return std::make_pair(std::move(f), std::move(b));
}

}  // namespace

Jaxpr recompute_scan_residuals(const Jaxpr& program) {
  Jaxpr j = program;
  Reads reads = reads_of(j);
  // Each scan once, in program order (a rewrite changes only its pair's eqns).
  for (size_t fi = 0; fi < j.eqns.size(); ++fi) {
    if (j.eqns[fi].prim->name != "scan") continue;
    // The scan that reads the forward scan's stacks: the first reader that is a scan.
    std::optional<size_t> bi;
    for (size_t o = 0; o < j.eqns[fi].outputs.size() && !bi; ++o) {
      auto it = reads.find(j.eqns[fi].outputs[o].id());
      if (it == reads.end()) continue;
      for (const auto& [eqn, pos] : it->second)
        if (eqn < j.eqns.size() && j.eqns[eqn].prim->name == "scan") {
          bi = eqn;
          break;
        }
    }
    if (!bi) continue;
    if (auto pair = split_pair(j, reads, fi, *bi)) {
      j.eqns[fi] = std::move(pair->first);
      j.eqns[*bi] = std::move(pair->second);
      reads = reads_of(j);
    }
  }
  return j;
}

}  // namespace cjax

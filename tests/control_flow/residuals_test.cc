// What reverse mode saves through a scan: loop-invariant residuals are hoisted out of the loop,
// per-iteration ones are stacked f32[L,...] and residuals that are scanned-over inputs are the
// inputs themselves. For scan/net_deep (L = 64, width 256, batch 32), a body checkpointed with
// dots_with_no_batch_dims_saveable stacks exactly the L dot outputs (and the layer inputs the
// weight gradient needs), and its backward pass is a reverse scan that recomputes the rest.
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "examples/registry.h"
#include "ir/primitive.h"
#include "ir/print/printer.h"
#include "passes/saved_residuals.h"
#include "passes/vjp.h"

using namespace cjax;

namespace {

// Where one stacked residual comes from inside the forward scan's body: the primitive producing
// it (reduce_precision looked through), or "carry" for the carried layer input.
std::string stacked_source(const Eqn& scan, size_t out_index) {
  const Jaxpr& body = *scan.params.get_jaxpr("jaxpr");
  const Atom& o = body.outvars[out_index];
  if (!o.is_var()) return "literal";
  Var v = o.var();
  for (;;) {
    const Eqn* producer = nullptr;
    for (const Eqn& e : body.eqns)
      for (const Var& out : e.outputs)
        if (out == v) producer = &e;
    if (!producer) {
      auto nc = static_cast<size_t>(scan.params.get_int("num_consts"));
      auto nk = static_cast<size_t>(scan.params.get_int("num_carry"));
      for (size_t i = nc; i < nc + nk; ++i)
        if (body.invars[i] == v) return "carry";
      return "input";
    }
    if (producer->prim->name != "reduce_precision") return producer->prim->name;
    v = producer->inputs[0].var();
  }
}

struct Report {
  std::vector<SavedResidual> residuals;
  std::map<std::string, int> stacked;  // source inside the scan -> count
  size_t bytes = 0;
  VjpResult vjp;
};

Report report(const std::string& example) {
  Jaxpr j = examples::get(example).make_jaxpr();
  Report r;
  r.vjp = vjp_jaxpr(j);
  r.residuals = saved_residuals(r.vjp.fwd, r.vjp.num_residuals, j.debug->arg_names);
  for (const SavedResidual& s : r.residuals) {
    r.bytes += s.aval.nbytes();
  }
  // Map each stacked residual (an output of the forward scan) to its source in the body.
  for (const Eqn& e : r.vjp.fwd.eqns) {
    if (e.prim->name != "scan") continue;
    std::unordered_map<const void*, size_t> index;
    for (size_t i = 0; i < e.outputs.size(); ++i) index[e.outputs[i].id()] = i;
    for (size_t k = r.vjp.fwd.outvars.size() - r.vjp.num_residuals; k < r.vjp.fwd.outvars.size();
         ++k) {
      const Atom& o = r.vjp.fwd.outvars[k];
      if (!o.is_var()) continue;
      auto it = index.find(o.var().id());
      if (it != index.end()) ++r.stacked[stacked_source(e, it->second)];
    }
  }
  return r;
}

std::vector<std::string> lines(const std::vector<SavedResidual>& rs) {
  std::vector<std::string> out;
  for (const SavedResidual& r : rs) {
    std::string d = r.description;
    out.push_back(r.aval.str_short() + " " + d.substr(0, d.find(" from ")));
  }
  return out;
}

}  // namespace

TEST_CASE("residuals: scan/net_deep stacks per-iteration residuals, forwards the weights") {
  Report r = report("scan/net_deep");
  CHECK(lines(r.residuals) ==
        std::vector<std::string>{"f32[64,256,256] from the argument all_weights",
                                 "f32[64,32,256] output of scan", "f32[64,32,256] output of scan"});
  // Per iteration: the layer input (for the weight gradient) and relu's derivative factor.
  CHECK(r.stacked == std::map<std::string, int>{{"carry", 1}, {"div", 1}});
  CHECK(r.bytes == 64u * 256 * 256 * 4 + 2u * 64 * 32 * 256 * 4);  // 20 MiB
}

TEST_CASE("residuals: the checkpointed body of scan/net_deep stacks only its dot outputs") {
  Report r = report("scan/net_deep_checkpoint");
  CHECK(lines(r.residuals) ==
        std::vector<std::string>{"f32[64,256,256] from the argument all_weights",
                                 "f32[64,256] from the argument all_biases",
                                 "f32[64,32,256] output of scan", "f32[64,32,256] output of scan"});
  // What the body computes and saves: the L dot outputs. Besides, the scan stacks the carried
  // layer input (an input of the checkpointed function, which the weight gradient reads); the
  // add and relu are recomputed in the backward scan.
  CHECK(r.stacked == std::map<std::string, int>{{"carry", 1}, {"dot_general", 1}});
  CHECK(r.bytes == 64u * 256 * 256 * 4 + 64u * 256 * 4 + 2u * 64 * 32 * 256 * 4);

  // The backward program is one reverse scan whose body recomputes inside a remat2.
  const Jaxpr& bwd = r.vjp.bwd;
  const Eqn* back = nullptr;
  for (const Eqn& e : bwd.eqns)
    if (e.prim->name == "scan") back = &e;
  REQUIRE(back);
  CHECK(back->params.get_bool("reverse"));
  CHECK(back->params.get_int("length") == 64);
  std::string body = to_string(*back->params.get_jaxpr("jaxpr"));
  CHECK(body.find("remat2[") != std::string::npos);
  CHECK(body.find("differentiated=True") != std::string::npos);
}

TEST_CASE("residuals: loop-invariant residuals are hoisted out of the loop, not stacked") {
  // scan/net's forward program: relu's constants are computed once, outside the scan.
  Report r = report("scan/net");
  const Eqn* fwd_scan = nullptr;
  size_t before = 0;
  for (const Eqn& e : r.vjp.fwd.eqns) {
    if (e.prim->name == "scan") fwd_scan = &e;
    if (!fwd_scan) ++before;
  }
  REQUIRE(fwd_scan);
  CHECK(before > 0);  // the hoisted eqns precede the loop
  CHECK(fwd_scan->params.get_int("num_consts") == static_cast<int64_t>(before));
  for (size_t i = 0; i < before; ++i) CHECK(r.vjp.fwd.eqns[i].prim->name == "broadcast_in_dim");
  // And no residual is a stacked copy of a loop-invariant value: every stacked one is f32[2,2].
  for (const SavedResidual& s : r.residuals)
    if (s.producer) CHECK(s.aval.shape == Shape{2, 2});
}

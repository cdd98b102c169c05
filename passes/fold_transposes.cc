#include "passes/fold_transposes.h"

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/primitive.h"
#include "ir/sub_jaxprs.h"

namespace cjax {
namespace {

// The permutation that turns dot_general(lhs, rhs)'s output [batch, lhs free, rhs free] into
// dot_general(rhs, lhs)'s output [batch, rhs free, lhs free].
std::vector<int64_t> swap_permutation(size_t batch, size_t lhs_free, size_t rhs_free) {
  std::vector<int64_t> perm;
  for (size_t i = 0; i < batch; ++i) perm.push_back(static_cast<int64_t>(i));
  for (size_t i = 0; i < rhs_free; ++i) perm.push_back(static_cast<int64_t>(batch + lhs_free + i));
  for (size_t i = 0; i < lhs_free; ++i) perm.push_back(static_cast<int64_t>(batch + i));
  return perm;
}

// The fold in one jaxpr, its bodies left as they are.
Jaxpr fold_top_level(const Jaxpr& jaxpr) {
  // How many times each variable is read (by eqns or as an output).
  std::unordered_map<const void*, int> reads;
  for (const Eqn& e : jaxpr.eqns)
    for (const Atom& a : e.inputs)
      if (a.is_var()) ++reads[a.var().id()];
  for (const Atom& a : jaxpr.outvars)
    if (a.is_var()) ++reads[a.var().id()];
  std::unordered_map<const void*, size_t> dot_of;  // dot output var -> eqn index
  for (size_t k = 0; k < jaxpr.eqns.size(); ++k)
    if (jaxpr.eqns[k].prim->name == "dot_general") dot_of[jaxpr.eqns[k].outputs[0].id()] = k;

  Jaxpr out = jaxpr;
  std::vector<bool> drop(jaxpr.eqns.size(), false);
  for (size_t k = 0; k < jaxpr.eqns.size(); ++k) {
    const Eqn& t = jaxpr.eqns[k];
    if (t.prim->name != "transpose" || !t.inputs[0].is_var()) continue;
    auto it = dot_of.find(t.inputs[0].var().id());
    if (it == dot_of.end() || reads[t.inputs[0].var().id()] != 1) continue;
    const Eqn& dot = jaxpr.eqns[it->second];
    const auto dn = DotDimensionNumbers::from_param(dot.params.at("dimension_numbers"));
    const size_t batch = dn.lhs_batch.size();
    const size_t lhs_free = dot.inputs[0].aval().shape.size() - batch - dn.lhs_contract.size();
    const size_t rhs_free = dot.inputs[1].aval().shape.size() - batch - dn.rhs_contract.size();
    if (t.params.get_ints("permutation") != swap_permutation(batch, lhs_free, rhs_free)) continue;
    // The swapped dot, computed where the transpose was, straight into its output.
    Eqn swapped = dot;
    swapped.inputs = {dot.inputs[1], dot.inputs[0]};
    swapped.outputs = t.outputs;
    swapped.params.set("dimension_numbers", DotDimensionNumbers{dn.rhs_contract, dn.lhs_contract,
                                                                dn.rhs_batch, dn.lhs_batch}
                                                .to_param());
    out.eqns[k] = std::move(swapped);
    drop[it->second] = true;
  }
  std::vector<Eqn> kept;
  for (size_t k = 0; k < out.eqns.size(); ++k)
    if (!drop[k]) kept.push_back(std::move(out.eqns[k]));
  out.eqns = std::move(kept);
  return out;
}

// Folds a jaxpr and every body below it, each shared body once.
class Folder {
 public:
  Jaxpr fold(const Jaxpr& jaxpr) {
    Jaxpr out = fold_top_level(jaxpr);
    for (Eqn& e : out.eqns) {
      std::vector<std::pair<std::string, ParamValue>> changed;
      for (const auto& [key, value] : e.params)
        if (std::optional<ParamValue> v = fold_value(value)) changed.emplace_back(key, *v);
      for (auto& [key, value] : changed) e.params.set(key, std::move(value));
    }
    return out;
  }

 private:
  // The value with its jaxprs folded, or nothing when it holds none.
  std::optional<ParamValue> fold_value(const ParamValue& v) {
    if (v.is<JaxprRef>()) {
      const JaxprRef& body = v.as<JaxprRef>();
      if (!body) return std::nullopt;
      auto [it, inserted] = done_.try_emplace(body.get());
      if (inserted) it->second = std::make_shared<const Jaxpr>(fold(*body));
      return ParamValue(it->second);
    }
    const std::vector<ParamValue>* items = param_items(v);
    if (!items) return std::nullopt;
    std::vector<ParamValue> folded;
    bool any = false;
    for (const ParamValue& item : *items) {
      std::optional<ParamValue> f = fold_value(item);
      any = any || f.has_value();
      folded.push_back(f ? std::move(*f) : item);
    }
    if (!any) return std::nullopt;
    if (v.is<ParamTuple>()) return ParamValue(ParamTuple{std::move(folded)});
    return ParamValue(ParamList{std::move(folded)});
  }

  std::unordered_map<const Jaxpr*, JaxprRef> done_;  // keys stay alive: the input holds them
};

}  // namespace

Jaxpr fold_transposed_dots(const Jaxpr& jaxpr) {
  return Folder().fold(jaxpr);
}

}  // namespace cjax

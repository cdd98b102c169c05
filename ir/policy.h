// The remat policy interface: for each primal equation inside a checkpoint, may its outputs be
// saved for the backward pass (Save), must they be recomputed (Recompute), or moved to another
// memory kind and back (Offload)? The concrete policies live in passes/.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ir/params.h"
#include "ir/shaped_array.h"

namespace cjax {

struct Primitive;

enum class Saveability { save, recompute, offload };

struct PolicyDecision {
  Saveability kind = Saveability::recompute;
  std::string offload_src, offload_dst;  // memory kinds, for offload
};

class Policy {
 public:
  virtual ~Policy() = default;
  // How the policy prints as a `policy=` param: JAX prints the policy function's repr, e.g.
  // `<function dots_with_no_batch_dims_saveable at 0xXXXXXXXXXXXX>`.
  virtual std::string repr() const = 0;
  virtual PolicyDecision decide(const Primitive& prim, std::span<const ShapedArray> in_avals,
                                const Params& params) const = 0;
  // A policy that decides per value rather than per primitive (policies::memory_budget) sees the
  // whole jaxpr partial_eval_jaxpr_custom splits and answers once for each of its eqns;
  // std::nullopt (the default) means: ask decide() eqn by eqn.
  virtual std::optional<std::vector<PolicyDecision>> plan(
      const Jaxpr& /*jaxpr*/, const std::vector<bool>& /*in_unknown*/) const {
    return std::nullopt;
  }
  // A policy may rebuild the body of the checkpoint it is given before the remat2 eqn is built
  // (checkpoint_jaxpr asks): same signature and values, e.g. memory_budget nests a chain of equal
  // layers as checkpoints following Griewank's binomial schedule. nullptr (the default) keeps it.
  virtual JaxprRef restructure(const Jaxpr& /*body*/) const { return nullptr; }
};

}  // namespace cjax

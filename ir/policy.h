// The remat policy interface: for each primal equation inside a checkpoint, may its outputs be
// saved for the backward pass (Save), must they be recomputed (Recompute), or moved to another
// memory kind and back (Offload)? The concrete policies live in passes/.
#pragma once

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
};

}  // namespace cjax

// Batching (vmap) as a pass: jaxpr -> jaxpr, as JAX's BatchTrace transforms a function (its
// batching rules, jax/_src/interpreters/batching.py and each primitive's rule in jax/_src/lax).
// A value is either unbatched or carries one extra axis of size `axis_size` at its batch
// dimension, which need not be 0: rules keep it where it falls (a transpose of the result is
// made only where an output asks for another axis), so that the program printed is JAX's.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ir/jaxpr.h"
#include "passes/builder.h"

namespace cjax {

// Where a value's batch axis is; nullopt: not batched (JAX's not_mapped).
using BatchDim = std::optional<int64_t>;

struct BatchAxis {
  int64_t size = 0;
  // The vmap's axis_name ("" for none): collectives over it (psum, axis_index, ...) reduce over
  // the batch.
  std::string name;
};

struct BatchRuleArgs {
  JaxprBuilder& b;
  const Eqn& eqn;                  // the eqn being batched (its params and source)
  std::span<const Atom> args;      // its inputs, batched or not
  std::span<const BatchDim> dims;  // one per input
  const BatchAxis& axis;           // at least one input is batched, or the eqn names axis.name
};
struct BatchedOutputs {
  std::vector<Atom> outs;
  std::vector<BatchDim> dims;
};
// Emits the batched computation of one eqn.
using BatchRule = std::function<BatchedOutputs(const BatchRuleArgs&)>;

struct BatchedJaxpr {
  Jaxpr jaxpr;  // (constvars; invars with their batch axes) -> outputs
  std::vector<BatchDim> out_dims;
};

// `jaxpr` with input i batched along in_dims[i] (its invar gets that axis; constvars stay
// unbatched). With `out_dims` (one per output, or one for all), each output is moved to the axis
// asked for (JAX's matchaxis: a transpose, or a broadcast of an unbatched output); an output that
// is batched but asked to be unbatched (nullopt) is an error. Without, outputs keep the axes their
// rules gave them. Throws UnsupportedError naming a primitive without a batching rule.
BatchedJaxpr batch_jaxpr(const Jaxpr& jaxpr, std::span<const BatchDim> in_dims,
                         const BatchAxis& axis,
                         std::optional<std::vector<BatchDim>> out_dims = std::nullopt);

namespace batching {

// An out_dims entry: axis 0 for a batched output, none for an unbatched one (JAX's
// zero_if_mapped, what remat2's body is batched with).
inline constexpr int64_t kZeroIfMapped = INT64_MIN;

// JAX's batching utilities (moveaxis, bdim_at_front, broadcast, matchaxis), for the rules.
Atom moveaxis(JaxprBuilder& b, const Atom& x, int64_t src, int64_t dst);
// A new axis of `size` at `axis` (lax.broadcast_in_dim with numpy's dimension numbers).
Atom broadcast(JaxprBuilder& b, const Atom& x, int64_t size, int64_t axis);
// The batch axis at 0: moved there, or made by broadcasting an unbatched value to `size`.
Atom bdim_at_front(JaxprBuilder& b, const Atom& x, BatchDim dim, int64_t size);
// `x` (batched at `src`) with its batch axis at `dst`; throws for a batched value asked to be
// unbatched (what names the value in the message).
Atom matchaxis(JaxprBuilder& b, const Atom& x, BatchDim src, BatchDim dst, int64_t size,
               const std::string& what);

// The first batched argument's batch size.
int64_t batch_size(const BatchRuleArgs& a);
// Params with one replaced.
Params with_param(const Params& p, const std::string& key, ParamValue value);

}  // namespace batching

}  // namespace cjax

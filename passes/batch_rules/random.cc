// Batching rules of the random primitives (jax/_src/prng.py): random_seed, random_split,
// random_bits and random_unwrap map over their keys' leading axes, so the batch axis stays where
// it is (defvectorized); random_wrap moves it in front of the words axis; random_fold_in and
// threefry2x32 line their operands up on one batch axis (defbroadcasting).
#include "passes/batch_rules/register.h"
#include "passes/batching.h"
#include "passes/lax/lax.h"
#include "passes/primitive_rules.h"

namespace cjax {
namespace {

using namespace batching;

BatchedOutputs vectorized(const BatchRuleArgs& a) {
  std::vector<Atom> outs = a.b.bind(*a.eqn.prim, {a.args[0]}, a.eqn.params);
  return {outs, {a.dims[0]}};
}

BatchedOutputs wrap(const BatchRuleArgs& a) {
  const Atom words = bdim_at_front(a.b, a.args[0], a.dims[0], batch_size(a));
  return {a.b.bind(*a.eqn.prim, {words}, a.eqn.params), {0}};
}

// Every operand with the batch axis in front (an unbatched scalar after the first operand, a
// message or a count shared by every example, stays a scalar); one of a smaller per-example
// shape than the largest, a per-example scalar, is broadcast to it.
BatchedOutputs broadcasting(const BatchRuleArgs& a) {
  const int64_t size = batch_size(a);
  std::vector<Atom> args;
  Shape shape;
  for (size_t i = 0; i < a.args.size(); ++i) {
    if (i > 0 && !a.dims[i] && a.args[i].aval().rank() == 0) {
      args.push_back(a.args[i]);  // one scalar for every example
      continue;
    }
    args.push_back(bdim_at_front(a.b, a.args[i], a.dims[i], size));
    if (args.back().aval().rank() > int64_t(shape.size())) shape = args.back().aval().shape;
  }
  for (Atom& x : args) {
    const ShapedArray& aval = x.aval();
    if (aval.rank() == 0 || aval.shape == shape) continue;
    x = lax_ops::broadcast_in_dim(a.b, x, shape, {0});  // (B,) per-example scalars
  }
  return {a.b.bind(*a.eqn.prim, std::move(args), a.eqn.params),
          std::vector<BatchDim>(a.eqn.outputs.size(), 0)};
}

}  // namespace

void register_random_batch_rules() {
  for (const char* name : {"random_seed", "random_split", "random_bits", "random_unwrap"})
    define_pass_rules(name).batch = vectorized;
  define_pass_rules("random_wrap").batch = wrap;
  define_pass_rules("random_fold_in").batch = broadcasting;
  define_pass_rules("threefry2x32").batch = broadcasting;
}

}  // namespace cjax

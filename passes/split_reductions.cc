#include "passes/split_reductions.h"

#include <numeric>
#include <string>

#include "ir/lax_params.h"
#include "passes/builder.h"
#include "passes/lax/lax.h"

namespace cjax {
namespace {

// reduce_sum, reduce_max or reduce_min (`prim`) over `axes`, with the params lax binds.
Atom reduce(JaxprBuilder& b, const std::string& prim, const Atom& x,
            const std::vector<int64_t>& axes) {
  return b.emit1(prim, {x}, lax_params::reduce(axes));
}

// Emits the split form of reduction `e` into `b`; its last eqn writes e's output.
void emit_split(JaxprBuilder& b, const Eqn& e, const SplitReductionOptions& o) {
  const std::string& prim = e.prim->name;
  const Shape& shape = e.inputs[0].aval().shape;
  const std::vector<int64_t> axes = e.params.get_ints("axes");
  std::vector<int64_t> perm;
  int64_t kept = 1, reduced = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) {
      perm.push_back(d);
      kept *= shape[static_cast<size_t>(d)];
    }
  for (int64_t d : axes) {
    perm.push_back(d);
    reduced *= shape[static_cast<size_t>(d)];
  }
  std::vector<int64_t> identity(perm.size());
  std::iota(identity.begin(), identity.end(), 0);
  Atom x = e.inputs[0];
  if (perm != identity) x = lax_ops::transpose(b, x, perm);
  Atom cur = lax_ops::reshape(b, x, Shape{kept, reduced});
  for (int64_t len = reduced; len > o.chunk;) {
    const int64_t whole = len / o.chunk, rest = len % o.chunk;
    Atom body = rest == 0 ? cur : lax_ops::slice(b, cur, {0, 0}, {kept, whole * o.chunk});
    Atom chunks = lax_ops::reshape(b, body, Shape{kept, whole, o.chunk});
    Atom level = reduce(b, prim, chunks, {2});
    if (rest != 0) {
      Atom tail = lax_ops::slice(b, cur, {0, whole * o.chunk}, {kept, len});
      Atom tail_sum = reduce(b, prim, tail, {1});
      Atom column = lax_ops::reshape(b, tail_sum, Shape{kept, 1});
      level = lax_ops::concatenate(b, {level, column}, 1);
    }
    cur = level;
    len = whole + (rest != 0 ? 1 : 0);
  }
  Atom out = reduce(b, prim, cur, {1});
  out = lax_ops::reshape(b, out, e.outputs[0].aval().shape);
  b.eqns().back().outputs[0] = e.outputs[0];
}

bool worth_splitting(const Eqn& e, const SplitReductionOptions& o) {
  const std::string& p = e.prim->name;
  if (p != "reduce_sum" && p != "reduce_max" && p != "reduce_min") return false;
  const ShapedArray& in = e.inputs[0].aval();
  if (!is_floating(in.dtype) && !is_integer(in.dtype)) return false;
  const int64_t out = e.outputs[0].aval().size();
  return out > 0 && out < o.min_outputs && in.size() / out > 4 * o.chunk;
}

}  // namespace

Jaxpr split_long_reductions(const Jaxpr& jaxpr, const SplitReductionOptions& options) {
  JaxprBuilder b;
  bool changed = false;
  for (const Eqn& e : jaxpr.eqns) {
    if (!worth_splitting(e, options)) {
      b.append(e);
      continue;
    }
    b.set_source(e.source);
    emit_split(b, e, options);
    changed = true;
  }
  if (!changed) return jaxpr;
  Jaxpr out = jaxpr;
  out.eqns = std::move(b.eqns());
  return out;
}

}  // namespace cjax

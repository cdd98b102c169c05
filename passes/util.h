// Small helpers shared by the rules of higher-order primitives (remat2, jit, scan).
#pragma once

#include <memory>
#include <vector>

#include "ir/jaxpr.h"

namespace cjax {

// The elements of `xs` whose flag in `keep` equals `want` (JAX's partition_list, one side).
template <class T>
std::vector<T> select(const std::vector<T>& xs, const std::vector<bool>& keep, bool want = true) {
  std::vector<T> out;
  for (size_t i = 0; i < xs.size() && i < keep.size(); ++i)
    if (keep[i] == want) out.push_back(xs[i]);
  return out;
}

// `params` with its `jaxpr` param replaced.
inline Params with_jaxpr(const Params& params, Jaxpr j) {
  Params out = params;
  out.set("jaxpr", JaxprRef(std::make_shared<const Jaxpr>(std::move(j))));
  return out;
}

// JAX's merge_lists for a call split in two: output i of the original eqn is the next output of
// the staged side where `unknown[i]`, else the next of the known side.
template <class K, class S>
std::vector<Atom> merge_outputs(const std::vector<bool>& unknown, const std::vector<K>& known,
                                const std::vector<S>& staged) {
  std::vector<Atom> out;
  size_t next_known = 0, next_staged = 0;
  for (bool u : unknown) out.push_back(u ? Atom(staged[next_staged++]) : Atom(known[next_known++]));
  return out;
}

// An eqn of `like`'s primitive, params and source location whose body is `body`, applied to
// `inputs`; its outputs are new variables typed like the body's outputs.
inline Eqn call_eqn(const Eqn& like, std::vector<Atom> inputs, Jaxpr body) {
  Eqn e;
  e.prim = like.prim;
  e.source = like.source;
  e.inputs = std::move(inputs);
  for (const Atom& o : body.outvars) e.outputs.emplace_back(o.aval());
  e.params = with_jaxpr(like.params, std::move(body));
  return e;
}

}  // namespace cjax

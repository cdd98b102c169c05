// Programs of calls nested `depth` deep, each level applying sin around the call below it:
// x -> sin(call(sin(call(... sin(x))))). Used by tests/frontend/deep_nesting_test.cc and
// bench/nesting_bench.cc. (cjax::jit inlines when called inside a trace, so nested jit eqns are
// built here directly; cjax::scan stages a scan eqn at every level.)
#pragma once

#include <cstdint>
#include <tuple>
#include <utility>

#include "cjax/api.h"
#include "ir/lax_params.h"
#include "passes/builder.h"
#include "passes/util.h"

namespace cjax::testing {

// (x: dtype[3]) -> sum of sin^(depth + 1)(x), the calls being jit eqns named level<k>.
inline Jaxpr nested_jits(int depth, DType dtype) {
  const ShapedArray aval(dtype, {3});
  Var x0(aval);
  JaxprBuilder base;
  Jaxpr body = base.build({x0}, {Atom(base.emit1("sin", {Atom(x0)}))});
  for (int level = 1; level <= depth; ++level) {
    JaxprBuilder b;
    Var x(aval);
    Params params{{"name", std::string("level") + std::to_string(level)}};
    Var y = b.emit1("jit", {Atom(x)}, with_jaxpr(params, std::move(body)));
    body = b.build({x}, {Atom(b.emit1("sin", {Atom(y)}))});
  }
  JaxprBuilder top;
  Var x(aval);
  Params call{{"name", std::string("top")}};
  Var y = top.emit1("jit", {Atom(x)}, with_jaxpr(call, std::move(body)));
  Var s = top.emit1("reduce_sum", {Atom(y)}, lax_params::reduce({0}));
  return top.build({x}, {Atom(s)});
}

// sin^(depth + 1)(x) through `depth` nested scans of `length` 1, traced with cjax::scan. (With a
// longer length the innermost body runs length^depth times.)
inline Array nested_scans(const Array& x, int depth, int64_t length = 1) {
  if (depth == 0) return numpy::sin(x);
  auto step = [depth, length](const Array& c, const std::tuple<>&) {
    return std::pair<Array, std::tuple<>>(nested_scans(c, depth - 1, length), {});
  };
  return numpy::sin(scan(step, x, std::tuple<>{}, length).first);
}

}  // namespace cjax::testing

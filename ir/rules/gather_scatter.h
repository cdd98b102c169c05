// What the scatters carry besides their dimension numbers: the combining function as a jaxpr of
// two scalars (JAX's lax._reduction_jaxpr, which JAX caches, so that every scatter-add of one
// dtype shares one jaxpr object and a program using it twice prints it once, hoisted).
#pragma once

#include <string_view>

#include "ir/jaxpr.h"

namespace cjax {

// `{ lambda ; a:f32[] b:f32[]. let c:f32[] = add a b in (c,) }` for scatter-add of f32 (mul,
// min, max for scatter-mul, -min, -max); one object per primitive and dtype. Throws
// cjax::Error for a primitive without one (scatter replaces: its update_jaxpr is None).
JaxprRef scatter_update_jaxpr(std::string_view scatter_prim, DType dtype);

}  // namespace cjax

// The jaxpr parser: reads the text cjax's printer writes and what real JAX prints, from the
// current format back to jax 0.2.2x (typed binders), into a Jaxpr.
//
//   let f = { lambda ; a:f32[1]. let  in (a,) } in
//   { lambda c:i32[1]; d:f32[1]. let
//       e:f32[1] = jit[name=f jaxpr=f] d
//       _:f32[] = reduce_sum[axes=(0,) out_sharding=None] e
//     in (e, 1.0:f32[], [...]:f32[3]) }
//
// What it accepts and what it builds:
// - `let NAME = { ... } in` preambles define shared jaxprs; a param naming one (`jaxpr=f`) holds
//   that very JaxprRef. Preambles may refer to each other in any order (not cyclically).
// - Each jaxpr is its own scope; jaxprs in params are closed (they cannot read outer vars).
// - Binders are typed (`a:f32[5,4]`); `_` is a dropped output; an old unused-binder name `g_`
//   is read as written (its print hint is `g`). Reading `_` is allowed: since jax 0.10.2 a
//   jit's inner jaxpr names its results after the outer ones, `_` when those are unused; a read
//   `_` is the latest output named `_` (in an output list, the last k of them in order), which
//   then becomes an ordinary Var.
// - Avals keep what cjax does not model (sharding `8@x`, named axes `;x:8`, `{U:y}`, memory
//   spaces `f32<host>`, extended dtypes `key<fry>`) in ShapedArray::annotations, so it prints
//   back; dtypes JAX has and cjax lacks (c64, float0, f8_*) are DType::opaque.
// - Literals: typed (`1.0:f32[]`, `True:bool[]`, `-inf:f32[]`), elided (`[...]:f32[3]`), and
//   untyped from older eras (`0.0`, `True`, `-2147483648`): their dtype comes from the callee's
//   binder (jit/cond/while/scan-like params), else from the eqn's typed operands when they agree,
//   else from the outputs when there are no typed operands, else f32 / i32 / bool. They are weak.
// - Param values: None, bools, ints, floats (`nan`, `-inf`), bare identifiers as strings, dtype
//   names as DType under dtype keys (new_dtype, preferred_element_type, dtype, index_dtype,
//   out_dtype), tuples, lists (quoted strings inside them), jaxprs, shared-jaxpr names, tuples
//   of jaxprs; `name=` is always a string (`<lambda>`, `transpose(f)`); anything else is an
//   OpaqueParam holding the exact text (`GatherDimensionNumbers(...)`, `<function f at 0x...>`).
//   A value ends before the next ` key=` or the `]` at bracket depth 0; a `)` with no partner
//   is text (jax 0.6 printed `P('x', None))`).
// - Params the current printer hides because the binders imply them are restored
//   (broadcast_in_dim's `shape`, empty `broadcast_dimensions`).
// - Primitives: `pjit` and `xla_call` eqns become `jit` (`call_jaxpr` renamed `jaxpr`). A known
//   primitive's params go through its canonicalizer, then its shape rule must give the binders'
//   types. Unknown primitives become opaque_primitive(name), typed by their binders, params in
//   read order.
// - An eqn without outputs is its right-hand side alone, `debug_callback[...] a`, as JAX prints
//   it (the older ` = prim[...] a` reads too); one with neither outputs nor params is rejected,
//   since it would print as a bare name.
// - A param value kept as text is one line, and its brackets balance (a `)` without a partner
//   excepted): a value running on means a mangled key, and would not print back.
// - Untyped binders (the pre-2021 format `{ lambda  ; a. let b = ...`) are rejected.
// - The limits of ir/limits.h hold: jaxprs and param tuples nest at most kMaxNesting levels (a
//   shared jaxpr counts its whole height where it is used), the program expands to at most
//   kMaxExpandedEqns eqns, avals have at most kMaxRank dimensions and sizes int64 can count.
//
// Every error is a cjax::ParseError with a 1-based line and column; no input crashes or hangs it.
#pragma once

#include <string_view>

#include "ir/jaxpr.h"

namespace cjax {

JaxprRef parse_jaxpr(std::string_view text);

}  // namespace cjax

// The jaxpr printer: JAX's text format (jax 0.10.2+ / 0.11), byte for byte.
//
//   let lambda = { lambda ; a:f32[1]. let b:f32[1] = integer_pow[y=2] a in (b,) } in
//   { lambda ; c:f32[1]. let
//       d:f32[1] = jit[name=<lambda> jaxpr=lambda] c
//     in (d,) }
//
// Variables are named a..z, ba, bb, ... lazily in print order, from one counter for the whole
// printout. Sub-jaxprs used more than once, or with more than 10 eqns, print once as a `let NAME
// = { ... } in` preamble and are referred to by NAME. A `jit` eqn's inner jaxpr re-uses the outer
// names of its arguments and results. Top-level eqn outputs nothing reads print as `_`, as do
// dropped vars. Params print with the primitive's print rule, else sorted by key.
#pragma once

#include <string>

#include "ir/jaxpr.h"
#include "ir/params.h"
#include "ir/print/doc.h"

namespace cjax {

// JAX's `str(jaxpr)` / `jaxpr.pretty_print(use_color=False)`; no trailing newline.
std::string to_string(const Jaxpr& j, int width = 80);

// Which JAX release's text to write. `current`: jax 0.10.2+, what to_string prints. `jax_0_4_30`:
// the text of jax 0.4.30 (the examples of its docs/jaxpr.rst): literals without their type
// (`3.0`, `0`), `jit` printed as `pjit`, broadcast_in_dim's params all printed (`shape` too),
// cond's `linear` (all False: cjax keeps no such param, and make_jaxpr's conds had none set),
// every sub-jaxpr inline (no `let` preambles), no re-use of outer names inside a jit, only
// dropped vars named `_`, and the `_` suffix of binders read from text that had it (`m_`).
enum class TextFormat { current, jax_0_4_30 };
std::string to_string(const Jaxpr& j, TextFormat format, int width = 80);

// One eqn with fresh names (a, b, ... for its outputs first, then its operands), for messages.
std::string to_string(const Eqn& e);

// A param value as one line, the way JAX prints it inside `[...]`: Python's str() at the top
// level (`float32`, `(1, 0)`, strings bare), repr() inside tuples and lists (`('rows',)`); a
// jaxpr as its own printout; ` at 0x<hex>` masked to ` at 0xXXXX`.
std::string param_value_to_string(const ParamValue& v);

}  // namespace cjax

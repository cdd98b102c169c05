// Registration of the built-in autodiff rules (jvp and transpose), one file per primitive family
// under passes/ad_rules/, named after the family of ir/rules/ (elementwise_*, structural,
// slicing, reductions*, dot). Explicit calls, not static initialisers: static libraries drop object
// files nobody references.
#pragma once

namespace cjax {

// Registers every family's rules once (thread-safe); the jvp and transpose passes call it.
void ensure_builtin_ad_rules();

void register_arithmetic_ad_rules();  // elementwise_arithmetic.cc: neg add sub mul div max min pow
                                      // ...
void register_transcendental_ad_rules();  // elementwise_transcendental.cc: sin cos exp log tanh erf
                                          // ...
void register_logical_ad_rules();  // elementwise_logical.cc: comparisons, bitwise, rounding, arg*
void register_select_ad_rules();   // elementwise_select.cc: select_n
void register_structural_ad_rules();      // structural.cc: broadcast, reshape, pad, convert ...
void register_slicing_ad_rules();         // slicing.cc: slice, dynamic_(update_)slice
void register_gather_scatter_ad_rules();  // gather_scatter.cc: gather, scatter*
void register_reduction_ad_rules();       // reductions.cc: reduce_sum/max/min/prod, sort
void register_cumulative_ad_rules();  // reductions_cumulative.cc: cumsum cumprod cummax cummin ...
void register_identity_ad_rules();    // elementwise_identity.cc: copy name optimization_barrier ...
void register_dot_general_ad_rules();  // dot.cc
void register_collective_ad_rules();   // collectives.cc: psum all_gather reduce_scatter
void register_custom_ad_rules();       // custom.cc: custom_jvp_call custom_vjp_call custom_lin

}  // namespace cjax

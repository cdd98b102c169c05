// Registration of the built-in batching rules (vmap), one file per primitive family, named as
// ir/rules/'s. Explicit calls, not static initialisers: static libraries drop object files nobody
// references.
#pragma once

namespace cjax {

void register_batch_rules();  // all of them, once; ensure_pass_rules() calls it

void register_elementwise_batch_rules();  // elementwise.cc: unary, n-ary, select_n, clamp, add_any
void register_structural_batch_rules();   // structural.cc: broadcast, reshape, transpose, pad ...
void register_reduction_batch_rules();    // reductions.cc: reduce_*, arg*, cum*, sort
void register_dot_general_batch_rules();  // dot.cc
void register_call_batch_rules();         // calls.cc: jit, remat2
void register_sequential_batch_rules();   // sequential.cc: dynamic_(update_)slice
void register_gather_scatter_batch_rules();  // gather_scatter.cc: gather, scatter*
void register_custom_batch_rules();          // custom.cc: custom_jvp_call, custom_vjp_call
void register_control_flow_batch_rules();    // control_flow.cc: scan, cond, while
void register_collective_batch_rules();  // collectives.cc: psum pmax pmin axis_index all_gather ...
void register_random_batch_rules();      // random.cc: random_*, threefry2x32

}  // namespace cjax

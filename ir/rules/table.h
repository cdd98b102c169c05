// The built-in primitive table (internal to ir/rules/). Each family file registers its
// primitives through one register_* function; registry.cc builds the table once, on first use.
// Registration is explicit on purpose: static self-registration would be dropped by the linker
// when a family's object file is otherwise unreferenced in the static library.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ir/primitive.h"

namespace cjax {

class PrimitiveTable {
 public:
  // Adds `prim`; throws cjax::Error when the name is taken. Fills in the default print rule
  // (sorted) and a no-op canonicalizer when they are left empty, and numbers it (Primitive::index).
  // The address is stable.
  Primitive& add(Primitive prim);
  const Primitive* find(std::string_view name) const;
  std::vector<std::string_view> names() const;  // sorted
  size_t size() const { return by_name_.size(); }

 private:
  std::map<std::string, std::unique_ptr<Primitive>, std::less<>> by_name_;
};

// One per family file.
void register_elementwise(PrimitiveTable& table);  // elementwise.cc: unary, binary, select, ...
void register_structural(PrimitiveTable& table);   // structural.cc: broadcast, reshape, iota, ...
void register_slicing(PrimitiveTable& table);      // slicing.cc: slice, dynamic_(update_)slice
void register_gather_scatter(PrimitiveTable& table);  // gather_scatter.cc: gather, scatter*
void register_reductions(PrimitiveTable& table);      // reductions.cc: reduce_*, arg*, cum*, sort
void register_dot(PrimitiveTable& table);             // dot.cc: dot_general
void register_calls(PrimitiveTable& table);           // calls.cc: jit, remat2, custom_*, device_put
void register_control_flow(PrimitiveTable& table);    // control_flow.cc: cond, while, scan
void register_collectives(PrimitiveTable& table);     // collectives.cc: psum, axis_index, ...
void register_random(PrimitiveTable& table);          // random.cc: random_*, threefry2x32

}  // namespace cjax

// A trace frame: the jaxpr under construction (internal to compiler/).
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "cjax/array.h"
#include "ir/jaxpr.h"

namespace cjax::detail {

class Frame : public std::enable_shared_from_this<Frame> {
 public:
  Frame(uint64_t id, size_t level) : id(id), level(level) {}

  const uint64_t id;
  const size_t level;
  bool alive = true;

  std::vector<Var> invars;
  std::vector<Eqn> eqns;
  std::vector<Var> constvars;
  std::vector<Array> const_values;  // parallel to constvars

  // The operand `x` as seen from this frame (see trace.h for the rules). Throws cjax::Error for
  // an escaped tracer or an abstract Array.
  Atom to_atom(const Array& x);
  // A fresh tracer of this frame for `var`.
  Array tracer(Var var);

 private:
  std::unordered_map<const void*, size_t> const_index_;  // ArrayImpl* or outer Var id -> constvar
  Var add_const(const void* key, const Array& value);
};

// The innermost active frame on this thread, or null.
std::shared_ptr<Frame> innermost_frame();
// A Literal holding the value of a concrete scalar Array (its aval, weak type included).
Literal literal_of(const Array& scalar);

}  // namespace cjax::detail

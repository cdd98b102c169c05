// Collectives over named axes, as jax.lax's: inside vmap(f, ..., axis_name="i"), f sees one
// example and these ops see all of them (jax/_src/lax/parallel.py).
//
//   auto normalize = cjax::vmap([](const Array& x) { return x / lax::psum(x, "i"); }, 0, 0, "i");
//   auto rank = [](const Array& x) { return lax::axis_index("i"); };   // 0, 1, ... per example
//
// An axis name not bound by an enclosing vmap is an error at the call ("unbound axis name: i").
// Several names ({"i", "j"}) reduce over all of them. make_jaxpr of the vmapped function prints
// what JAX prints: the collective turned into array ops over the batch axis (a positional psum,
// an iota, a transpose).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <source_location>
#include <string>
#include <utility>
#include <vector>

#include "cjax/array.h"
#include "ir/source_info.h"

namespace cjax::lax {

// One axis name ("i") or several ({"i", "j"}).
class AxisNames {
 public:
  AxisNames(const char* name) : names_{name} {}
  AxisNames(std::string name) : names_{std::move(name)} {}
  AxisNames(std::initializer_list<std::string> names) : names_(names) {}
  const std::vector<std::string>& names() const { return names_; }

 private:
  std::vector<std::string> names_;
};

// The sum (max, min, mean) over every member of the named axes; each member gets it. psum of a
// value that is not traced (a constant every member shares) is size × value, as in JAX; bool
// operands are summed as int32.
Array psum(const Array& x, const AxisNames& axis_name,
           SourceInfo src = std::source_location::current());
Array pmax(const Array& x, const AxisNames& axis_name,
           SourceInfo src = std::source_location::current());
Array pmin(const Array& x, const AxisNames& axis_name,
           SourceInfo src = std::source_location::current());
Array pmean(const Array& x, const AxisNames& axis_name,
            SourceInfo src = std::source_location::current());
// This member's index along the axis (i32[]).
Array axis_index(const std::string& axis_name, SourceInfo src = std::source_location::current());
// The product of the named axes' sizes (JAX's lax.axis_size).
int64_t axis_size(const AxisNames& axis_name, SourceInfo src = std::source_location::current());
// Every member's x, stacked along a new axis at `axis` (tiled: concatenated along axis `axis`).
Array all_gather(const Array& x, const AxisNames& axis_name, int64_t axis = 0, bool tiled = false,
                 SourceInfo src = std::source_location::current());
// psum(x) of which each member keeps its slice along scatter_dimension: index axis_index of that
// dimension, whose size must be the axis size (tiled: a block of size / axis size).
Array psum_scatter(const Array& x, const AxisNames& axis_name, int64_t scatter_dimension = 0,
                   bool tiled = false, SourceInfo src = std::source_location::current());

// Member src's x goes to member dst for each pair (src, dst); a member no pair sends to gets
// zeros. Sources are distinct, and so are destinations (lax.ppermute).
Array ppermute(const Array& x, const AxisNames& axis_name,
               const std::vector<std::pair<int64_t, int64_t>>& perm,
               SourceInfo src = std::source_location::current());
// Each member cuts x along split_axis into one block per member, sends block j to member j, and
// concatenates the blocks it receives along concat_axis (lax.all_to_all). Not tiled, the split
// axis's size must be the axis size and the blocks lose it; tiled, it must divide by the axis
// size and the received blocks are joined along concat_axis.
Array all_to_all(const Array& x, const std::string& axis_name, int64_t split_axis,
                 int64_t concat_axis, bool tiled = false,
                 SourceInfo src = std::source_location::current());

}  // namespace cjax::lax

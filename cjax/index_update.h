// x.at[index] (JAX's _IndexUpdateRef), written x.at({index...}) in C++: a new array with the
// elements at `index` read (get), replaced (set) or combined with `y` (add, multiply, min, max)
// through scatter. x itself is unchanged: arrays are immutable. Indices are those of x[...];
// repeated ones combine for add/multiply/min/max, and for set one of the updates wins.
//   auto grads = jnp::zeros({64, 32}).at(tokens).add(rows);   // an embedding's gradient
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "cjax/array.h"
#include "cjax/lax.h"

namespace cjax {

class IndexUpdateRef {
 public:
  IndexUpdateRef(Array x, std::vector<Index> index, SourceInfo src)
      : x_(std::move(x)), index_(std::move(index)), src_(src) {}

  // x[index]; with a mode, through gather in that mode (FILL_OR_DROP reads fill_value, NaN by
  // default for floats, where an index is out of bounds).
  Array get(std::optional<GatherScatterMode> mode = std::nullopt,
            std::optional<double> fill_value = std::nullopt) const;
  // The unset mode of these is FILL_OR_DROP: updates at out-of-bounds indices are dropped.
  Array set(const Array& y, const lax::ScatterOptions& options = {}) const;
  Array add(const Array& y, const lax::ScatterOptions& options = {}) const;
  Array multiply(const Array& y, const lax::ScatterOptions& options = {}) const;
  Array mul(const Array& y, const lax::ScatterOptions& options = {}) const {
    return multiply(y, options);
  }
  Array min(const Array& y, const lax::ScatterOptions& options = {}) const;
  Array max(const Array& y, const lax::ScatterOptions& options = {}) const;

 private:
  Array update(std::string_view prim, const Array& y, const lax::ScatterOptions& options) const;
  Array x_;
  std::vector<Index> index_;
  SourceInfo src_;
};

}  // namespace cjax

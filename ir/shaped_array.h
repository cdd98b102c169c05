// ShapedArray: the abstract value (aval) of an array, a dtype and a shape. Printed the way JAX's
// `aval.str_short(short_dtypes=True)` prints it: `f32[5,4]`, `f32[]`, `bool[3]`.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/dtype.h"

namespace cjax {

using Shape = std::vector<int64_t>;

// Text a parsed jaxpr carried in an aval that cjax does not model (sharding `8@x`, named axes
// `;x:8`, unreduced `{U:y}`, extended dtypes `key<fry>`). Kept only so such text prints back.
struct AvalAnnotations {
  std::string dtype_text;               // replaces the short dtype name when non-empty
  std::vector<std::string> dim_suffix;  // per dimension, printed right after the size
  std::string inner_suffix;             // printed inside the brackets, after the last dim
  std::string suffix;                   // printed after the closing bracket
  bool operator==(const AvalAnnotations&) const = default;
};

struct ShapedArray {
  DType dtype = DType::f32;
  Shape shape;
  // JAX's weak type: a Python scalar's type, which yields to the other operand's dtype. Never
  // printed in avals; visible only through params such as `weak_type=False`.
  bool weak_type = false;
  std::shared_ptr<const AvalAnnotations> annotations;

  ShapedArray() = default;
  ShapedArray(DType d, Shape s, bool weak = false)
      : dtype(d), shape(std::move(s)), weak_type(weak) {}

  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  int64_t size() const;           // number of elements
  size_t nbytes() const;          // size() * itemsize(dtype)
  std::string str_short() const;  // f32[5,4]
  // Same dtype and shape (weak type and annotations ignored): what shape rules compare.
  bool same_type(const ShapedArray& o) const { return dtype == o.dtype && shape == o.shape; }
};

std::string shape_str(const Shape& s);  // "(5, 4)", "(3,)", "()": Python tuple syntax

}  // namespace cjax

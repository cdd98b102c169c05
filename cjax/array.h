// cjax::Array: the value type of the front end, a shared immutable handle to one of
//   - a concrete array (a runtime::Buffer on the host),
//   - a tracer (a variable of a jaxpr being built by make_jaxpr or a transformation), or
//   - an abstract array (only an aval, a `ShapeDtype` spec; it can be traced, not computed with).
// A C++ number converts implicitly to a *weak-typed* scalar Array, JAX's Python scalar: `x + 1.0`
// keeps x's dtype. cjax::array(...) makes strongly typed arrays from data, like jnp.array.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <optional>
#include <source_location>
#include <span>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "ir/dtype.h"
#include "ir/errors.h"
#include "ir/shaped_array.h"
#include "ir/source_info.h"
#include "runtime/buffer.h"

namespace cjax {

namespace detail {
struct ArrayImpl;
}

// An aval-only argument spec, e.g. `cjax::ShapeDtype{DType::f32, {5, 4}}`: make_jaxpr traces it
// without data.
struct ShapeDtype {
  DType dtype = DType::f32;
  Shape shape;
  bool weak_type = false;
  ShapedArray aval() const { return ShapedArray(dtype, shape, weak_type); }
};

class IndexArgs;
class IndexUpdateRef;

class Array {
 public:
  Array() = default;  // the null Array (defined() is false)

  // A C++ number is JAX's Python scalar: integers are weak i32, floating point numbers weak f32;
  // bool is a (strong) bool, as in JAX.
  template <class T>
  requires std::is_arithmetic_v<T> Array(T value)  // NOLINT: implicit on purpose
      : Array(number(value)) {}
  Array(const ShapeDtype& spec);  // NOLINT: an abstract Array of that aval

  static Array from_buffer(runtime::Buffer buffer, bool weak_type = false);
  static Array abstract(ShapedArray aval);
  // A strongly typed concrete scalar (value converted to t), like jnp.array(v, dtype=t).
  static Array scalar(double value, DType t);

  bool defined() const { return impl_ != nullptr; }
  const ShapedArray& aval() const;
  const Shape& shape() const { return aval().shape; }
  DType dtype() const { return aval().dtype; }
  int64_t ndim() const { return aval().rank(); }
  int64_t size() const { return aval().size(); }
  bool weak_type() const { return aval().weak_type; }

  bool is_concrete() const;
  // Whether the Array was donated to a jit call (donate_argnums), which consumed its buffer:
  // reading it then throws cjax::Error, as JAX's deleted arrays do.
  bool is_deleted() const;
  bool is_tracer() const;
  bool is_abstract() const;
  // A C++ number (or a conversion of one): folded by conversions, a Literal when staged.
  bool is_python_scalar() const;

  // The storage of a concrete Array; throws cjax::TypeError for tracers ("cannot read the value
  // of a traced Array ...", naming the op that made it) and cjax::Error for abstract Arrays.
  const runtime::Buffer& buffer() const;
  // The value of a one-element concrete Array. This is where C++ control flow meets a value
  // (`if (x.item<bool>())`), so on a tracer the TypeError also gives the caller's file:line:col,
  // the op that made the value and where, and what to use instead (np::where, cjax::cond).
  // (An Array has no conversion to bool: `if (x > 0)` does not compile.)
  double item(SourceInfo src = std::source_location::current()) const;
  template <class T>
  T item(SourceInfo src = std::source_location::current()) const {
    return static_cast<T>(item(src));
  }
  // All elements, row-major, converted to T (on a tracer: the same TypeError as item()).
  template <class T>
  std::vector<T> to_vector(SourceInfo src = std::source_location::current()) const {
    std::vector<double> d = values(src).to_doubles();
    return std::vector<T>(d.begin(), d.end());
  }

  // JAX's repr: `Array([1., 2., 3.], dtype=float32)`; a tracer prints as
  // `Traced<f32[3]>`, an abstract Array as `ShapeDtype(f32[3])`.
  std::string to_string() const;

  // NumPy-style methods (see cjax/numpy.h).
  Array reshape(const Shape& shape, SourceInfo src = std::source_location::current()) const;
  Array T(SourceInfo src = std::source_location::current()) const;
  Array astype(DType t, SourceInfo src = std::source_location::current()) const;
  // x[0], x[{ellipsis, slice(0, 64)}], x[{newaxis, all, 3}], x[i] with a traced integer i.
  Array operator[](const IndexArgs& index) const;
  // JAX's x.at[index]: .get(), .set(y), .add(y), .multiply(y), .min(y), .max(y)
  // (cjax/index_update.h).
  IndexUpdateRef at(const IndexArgs& index) const;

  // Identity: two handles to the same array.
  const detail::ArrayImpl* id() const { return impl_.get(); }
  const std::shared_ptr<const detail::ArrayImpl>& impl() const { return impl_; }
  static Array from_impl(std::shared_ptr<const detail::ArrayImpl> impl);

 private:
  // buffer(), with the caller's location in the error for a tracer.
  const runtime::Buffer& values(const SourceInfo& src) const;
  static Array python_bool(bool v);
  static Array python_int(int64_t v);
  static Array python_float(double v);
  template <class T>
  static Array number(T v) {
    if constexpr (std::is_same_v<T, bool>)
      return python_bool(v);
    else if constexpr (std::is_integral_v<T>)
      return python_int(static_cast<int64_t>(v));
    else
      return python_float(static_cast<double>(v));
  }

  std::shared_ptr<const detail::ArrayImpl> impl_;
};

std::ostream& operator<<(std::ostream& os, const Array& a);

// ---- indexing
// ------------------------------------------------------------------------------------

// Python's slice `start:stop:step`; unset fields are None.
struct Slice {
  std::optional<int64_t> start, stop, step;
};
struct EllipsisIndex {};
struct NewAxisIndex {};
inline constexpr EllipsisIndex ellipsis{};  // `...`
inline constexpr NewAxisIndex newaxis{};    // `None`
inline const Slice all{};                   // `:`
inline Slice slice(std::optional<int64_t> start, std::optional<int64_t> stop,
                   std::optional<int64_t> step = std::nullopt) {
  return Slice{start, stop, step};
}

// One index of x[...]: an integer, a slice, `...`, `None`, or a scalar integer Array (traced or
// concrete, which makes the indexing a dynamic_slice).
class Index {
 public:
  template <class T>
  requires std::is_integral_v<T> Index(T i) : v_(static_cast<int64_t>(i)) {}  // NOLINT
  Index(Slice s) : v_(s) {}                                                   // NOLINT
  Index(EllipsisIndex e) : v_(e) {}                                           // NOLINT
  Index(NewAxisIndex n) : v_(n) {}                                            // NOLINT
  Index(Array a) : v_(std::move(a)) {}                                        // NOLINT
  using Variant = std::variant<int64_t, Slice, EllipsisIndex, NewAxisIndex, Array>;
  const Variant& value() const { return v_; }

 private:
  Variant v_;
};

// The argument of Array::operator[]: one index or a braced list, plus the caller's location
// (captured by the implicit conversion, so it points at the user's expression).
class IndexArgs {
 public:
  template <class T>
  requires std::is_integral_v<T> IndexArgs(
      T i, std::source_location loc = std::source_location::current())  // NOLINT
      : indices_{Index(i)}, src_(loc) {}
  IndexArgs(Slice s, std::source_location loc = std::source_location::current())  // NOLINT
      : indices_{Index(s)}, src_(loc) {}
  IndexArgs(EllipsisIndex e, std::source_location loc = std::source_location::current())  // NOLINT
      : indices_{Index(e)}, src_(loc) {}
  IndexArgs(NewAxisIndex n, std::source_location loc = std::source_location::current())  // NOLINT
      : indices_{Index(n)}, src_(loc) {}
  IndexArgs(const Array& a, std::source_location loc = std::source_location::current())  // NOLINT
      : indices_{Index(a)}, src_(loc) {}
  IndexArgs(std::initializer_list<Index> indices,  // NOLINT
            std::source_location loc = std::source_location::current())
      : indices_(indices), src_(loc) {}
  IndexArgs(std::vector<Index> indices, SourceInfo src) : indices_(std::move(indices)), src_(src) {}

  const std::vector<Index>& indices() const { return indices_; }
  const SourceInfo& src() const { return src_; }

 private:
  std::vector<Index> indices_;
  SourceInfo src_;
};

// ---- construction from data
// ------------------------------------------------------------------------

namespace detail {
// `data` holds `n` elements of `natural` dtype; the result has `shape` and dtype `target`.
Array make_array(const void* data, DType natural, size_t n, const Shape& shape, DType target);
DType canonical_dtype(DType natural);  // x64 disabled: f64 -> f32, i64 -> i32, u64 -> u32

template <class T>
constexpr DType natural_dtype() {
  static_assert(std::is_arithmetic_v<T>, "cjax::array: data must be numbers or bools");
  if constexpr (std::is_same_v<T, bool>)
    return DType::bool_;
  else if constexpr (std::is_floating_point_v<T>)
    return sizeof(T) == 4 ? DType::f32 : DType::f64;
  else if constexpr (std::is_signed_v<T>)
    return sizeof(T) == 1   ? DType::i8
           : sizeof(T) == 2 ? DType::i16
           : sizeof(T) == 4 ? DType::i32
                            : DType::i64;
  else
    return sizeof(T) == 1   ? DType::u8
           : sizeof(T) == 2 ? DType::u16
           : sizeof(T) == 4 ? DType::u32
                            : DType::u64;
}

// The fixed-width type Buffer::from_data accepts for T.
template <class T>
using storage_t = std::conditional_t<
    std::is_same_v<T, bool>, bool,
    std::conditional_t<
        std::is_floating_point_v<T>, std::conditional_t<sizeof(T) == 4, float, double>,
        std::conditional_t<
            std::is_signed_v<T>,
            std::conditional_t<
                sizeof(T) == 1, int8_t,
                std::conditional_t<sizeof(T) == 2, int16_t,
                                   std::conditional_t<sizeof(T) == 4, int32_t, int64_t>>>,
            std::conditional_t<
                sizeof(T) == 1, uint8_t,
                std::conditional_t<sizeof(T) == 2, uint16_t,
                                   std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>>>>;

template <class T, class It>
Array array_from_range(It first, size_t n, const Shape& shape, std::optional<DType> dtype) {
  using S = storage_t<T>;
  std::unique_ptr<S[]> tmp(new S[n > 0 ? n : 1]);
  for (size_t i = 0; i < n; ++i, ++first) tmp[i] = static_cast<S>(*first);
  constexpr DType natural = natural_dtype<T>();
  return make_array(tmp.get(), natural, n, shape, dtype.value_or(canonical_dtype(natural)));
}
}  // namespace detail

// jnp.array: a strongly typed concrete array. The default dtype is JAX's with x64 disabled
// (double -> f32, int64 -> i32); pass `dtype` to choose another. `shape` defaults to (n,).
template <class T>
requires std::is_arithmetic_v<T> Array array(const std::vector<T>& data,
                                             std::optional<Shape> shape = std::nullopt,
                                             std::optional<DType> dtype = std::nullopt) {
  Shape s = shape ? *shape : Shape{static_cast<int64_t>(data.size())};
  return detail::array_from_range<T>(data.begin(), data.size(), s, dtype);
}
template <class T>
requires std::is_arithmetic_v<T> Array array(std::initializer_list<T> data,
                                             std::optional<DType> dtype = std::nullopt) {
  return detail::array_from_range<T>(data.begin(), data.size(),
                                     Shape{static_cast<int64_t>(data.size())}, dtype);
}
// A matrix from rows: cjax::array({{1.f, 2.f}, {3.f, 4.f}}).
template <class T>
requires std::is_arithmetic_v<T> Array array(std::initializer_list<std::initializer_list<T>> rows,
                                             std::optional<DType> dtype = std::nullopt) {
  std::vector<T> flat;
  size_t cols = rows.size() ? rows.begin()->size() : 0;
  for (const auto& r : rows) {
    if (r.size() != cols) throw TypeError("cjax::array: rows of different lengths");
    flat.insert(flat.end(), r.begin(), r.end());
  }
  return detail::array_from_range<T>(
      flat.begin(), flat.size(),
      Shape{static_cast<int64_t>(rows.size()), static_cast<int64_t>(cols)}, dtype);
}
// A rank-0 array (strong, unlike the implicit conversion of a C++ number).
template <class T>
requires std::is_arithmetic_v<T> Array array(T value, std::optional<DType> dtype = std::nullopt) {
  return detail::array_from_range<T>(&value, 1, Shape{}, dtype);
}

}  // namespace cjax

// Typed equation parameters. A value is None, a bool, an int, a float, a string, a dtype, a tuple
// `(...)` or list `[...]` of values, a nested jaxpr, a remat policy, or opaque text kept verbatim
// (a parsed param cjax does not model, e.g. `GatherDimensionNumbers(...)`).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "ir/dtype.h"

namespace cjax {

struct Jaxpr;
class Policy;
using JaxprRef = std::shared_ptr<const Jaxpr>;
using PolicyRef = std::shared_ptr<const Policy>;

// A param that is an object of the layers above, known here only by how it prints: a custom
// derivative rule (custom_jvp_call's `jvp`, custom_vjp_call's `fwd` and `bwd`), which JAX prints
// by its function's name. Compared by identity.
class ParamObject {
 public:
  virtual ~ParamObject() = default;
  virtual std::string repr() const = 0;
};
using ObjectRef = std::shared_ptr<const ParamObject>;

struct ParamValue;
struct NoneParam {
  bool operator==(const NoneParam&) const = default;
};
struct ParamTuple {
  std::vector<ParamValue> items;
};
struct ParamList {
  std::vector<ParamValue> items;
};
struct OpaqueParam {
  std::string text;
};

struct ParamValue {
  using Variant = std::variant<NoneParam, bool, int64_t, double, std::string, DType, ParamTuple,
                               ParamList, JaxprRef, PolicyRef, OpaqueParam, ObjectRef>;
  Variant v;
  // An int that JAX computed with numpy: it prints as `np.int64(2)` (inside tuples such as the
  // axes vmap's batching rules shift with np.add). Equal to the plain int, as in Python.
  bool numpy_int = false;

  ParamValue() = default;
  ParamValue(NoneParam n) : v(n) {}
  ParamValue(bool b) : v(b) {}
  ParamValue(int i) : v(int64_t{i}) {}
  ParamValue(int64_t i) : v(i) {}
  ParamValue(double d) : v(d) {}
  ParamValue(std::string s) : v(std::move(s)) {}
  ParamValue(const char* s) : v(std::string(s)) {}
  ParamValue(DType t) : v(t) {}
  ParamValue(ParamTuple t) : v(std::move(t)) {}
  ParamValue(ParamList l) : v(std::move(l)) {}
  ParamValue(JaxprRef j) : v(std::move(j)) {}
  ParamValue(PolicyRef p) : v(std::move(p)) {}
  ParamValue(OpaqueParam o) : v(std::move(o)) {}
  ParamValue(ObjectRef o) : v(std::move(o)) {}

  // (1, 0) / (0,) / (): a tuple of ints, the form of axes, permutations and shapes.
  static ParamValue ints(const std::vector<int64_t>& xs);
  // [1] / []: a list of ints, as inside dot_general's dimension_numbers.
  static ParamValue int_list(const std::vector<int64_t>& xs);
  static ParamValue bools(const std::vector<bool>& xs);
  // np.int64(i), and a tuple of them.
  static ParamValue np_int(int64_t i);
  static ParamValue np_ints(const std::vector<int64_t>& xs);

  template <class T>
  bool is() const {
    return std::holds_alternative<T>(v);
  }
  template <class T>
  const T& as() const {
    return std::get<T>(v);
  }
  bool is_none() const { return is<NoneParam>(); }
  // The ints of a tuple or list of ints; throws cjax::Error otherwise.
  std::vector<int64_t> to_ints() const;

  // Structural equality; nested jaxprs and policies compare by identity, floats bitwise.
  bool operator==(const ParamValue& o) const;
};

// A parameter list. Keeps insertion order; the printer sorts (or applies the primitive's rule).
class Params {
 public:
  Params() = default;
  Params(std::initializer_list<std::pair<std::string, ParamValue>> init);

  void set(std::string key, ParamValue value);  // replaces an existing key
  const ParamValue* find(std::string_view key) const;
  bool has(std::string_view key) const { return find(key) != nullptr; }
  bool erase(std::string_view key);

  // Typed access; each throws cjax::Error naming the key when it is missing or of another type.
  const ParamValue& at(std::string_view key) const;
  int64_t get_int(std::string_view key) const;
  bool get_bool(std::string_view key) const;
  double get_float(std::string_view key) const;  // accepts ints too
  const std::string& get_string(std::string_view key) const;
  DType get_dtype(std::string_view key) const;
  std::vector<int64_t> get_ints(std::string_view key) const;
  const JaxprRef& get_jaxpr(std::string_view key) const;

  // Same keys with equal values, in any order.
  bool operator==(const Params& o) const;

  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }

 private:
  std::vector<std::pair<std::string, ParamValue>> items_;
};

// dot_general's dimension_numbers: ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch)).
struct DotDimensionNumbers {
  std::vector<int64_t> lhs_contract, rhs_contract, lhs_batch, rhs_batch;
  ParamValue to_param() const;                                 // (([1], [0]), ([], []))
  static DotDimensionNumbers from_param(const ParamValue& v);  // throws cjax::Error
};

}  // namespace cjax

// Elementwise primitives: unary ops, binary ops with JAX's size-1 broadcasting, comparisons,
// select_n, clamp, convert_element_type, and the identity-like ops (name, copy,
// optimization_barrier). Params, dtype classes and weak-type rules follow jax/_src/lax/lax.py.
#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <string_view>

#include "ir/rules/rule_util.h"
#include "ir/rules/table.h"

namespace cjax {
namespace {

using namespace rules;

// --- unary --------------------------------------------------------------------------------------

struct UnarySpec {
  const char* name;
  unsigned accepted;
  bool has_accuracy;  // binds `accuracy=None` by default; the param is hidden when None
  bool to_bool = false;
};

constexpr UnarySpec kUnary[] = {
    {"neg", kNum, false},
    {"sign", kNum, false},
    {"floor", kFloat, false},
    {"ceil", kFloat, false},
    {"is_finite", kFloat, false, /*to_bool=*/true},
    {"exp", kFloat, true},
    {"exp2", kFloat, true},
    {"log", kFloat, true},
    {"expm1", kFloat, true},
    {"log1p", kFloat, true},
    {"tanh", kFloat, true},
    {"logistic", kFloat, true},
    {"sin", kFloat, true},
    {"cos", kFloat, true},
    {"tan", kFloat, true},
    {"sqrt", kFloat, true},
    {"rsqrt", kFloat, true},
    {"cbrt", kFloat, true},
    {"asin", kFloat, false},
    {"acos", kFloat, false},
    {"atan", kFloat, false},
    {"sinh", kFloat, false},
    {"cosh", kFloat, false},
    {"asinh", kFloat, false},
    {"acosh", kFloat, false},
    {"atanh", kFloat, false},
    {"erf", kFloat, false},
    {"erfc", kFloat, false},
    {"erf_inv", kFloat, false},
    {"lgamma", kFloat, false},
    {"digamma", kFloat, false},
    {"abs", kSigned | kFloat, false},
    {"not", kBoolOrInt, false},
    {"population_count", kInt, false},
    {"square", kNum, false},
};

ShapeRule unary_rule(UnarySpec spec) {
  return [spec](Avals in, const Params&) -> AvalList {
    expect_arity(spec.name, in, 1);
    expect_dtype(spec.name, in, 0, spec.accepted);
    ShapedArray out = in[0];
    out.annotations = nullptr;
    if (spec.to_bool) out.dtype = DType::bool_;
    return {out};
  };
}

AvalList integer_pow_rule(Avals in, const Params& params) {
  expect_arity("integer_pow", in, 1);
  expect_dtype("integer_pow", in, 0, kNum);
  int64_t y = int_param("integer_pow", params, "y");
  if (y < 0 && is_integer(in[0].dtype))
    fail_got("integer_pow", fmt::format("integers cannot be raised to the negative power {}", y),
             in);
  return {ShapedArray(in[0].dtype, in[0].shape, in[0].weak_type)};
}

AvalList reduce_precision_rule(Avals in, const Params& params) {
  expect_arity("reduce_precision", in, 1);
  expect_dtype("reduce_precision", in, 0, kFloat);
  int64_t e = int_param("reduce_precision", params, "exponent_bits");
  int64_t m = int_param("reduce_precision", params, "mantissa_bits");
  if (e < 1) fail("reduce_precision", fmt::format("exponent_bits must be positive, got {}", e));
  if (m < 0) fail("reduce_precision", fmt::format("mantissa_bits must be non-negative, got {}", m));
  return {ShapedArray(in[0].dtype, in[0].shape, in[0].weak_type)};
}

// bitcast_convert_type[new_dtype]: the same bits read as another dtype. Between dtypes of one
// width the shape stays; to a narrower one a minor dimension of the width ratio is added; to a
// wider one the minor dimension, which must be that ratio, goes (XLA's BitcastConvertType).
AvalList bitcast_convert_type_rule(Avals in, const Params& params) {
  constexpr std::string_view kPrim = "bitcast_convert_type";
  expect_arity(kPrim, in, 1);
  expect_dtype(kPrim, in, 0, kAny);
  const DType to = dtype_param(kPrim, params, "new_dtype");
  if (!in_class(to, kAny)) fail(kPrim, fmt::format("cannot bitcast to {}", long_name(to)));
  const size_t from_size = itemsize(in[0].dtype), to_size = itemsize(to);
  Shape shape = in[0].shape;
  if (to_size < from_size) {
    shape.push_back(static_cast<int64_t>(from_size / to_size));
  } else if (to_size > from_size) {
    const auto ratio = static_cast<int64_t>(to_size / from_size);
    if (shape.empty() || shape.back() != ratio)
      fail_got(kPrim,
               fmt::format("to the wider {} the minor dimension must be {}", short_name(to), ratio),
               in);
    shape.pop_back();
  }
  return {ShapedArray(to, std::move(shape))};
}

// round[rounding_method]: 0 rounds halves away from zero, 1 to even (JAX's RoundingMethod).
AvalList round_rule(Avals in, const Params& params) {
  expect_arity("round", in, 1);
  expect_dtype("round", in, 0, kFloat);
  param("round", params, "rounding_method");
  ShapedArray out = in[0];
  out.annotations = nullptr;
  return {out};
}

AvalList convert_element_type_rule(Avals in, const Params& params) {
  expect_arity("convert_element_type", in, 1);
  DType t = dtype_param("convert_element_type", params, "new_dtype");
  bool weak = bool_param("convert_element_type", params, "weak_type");
  return {ShapedArray(t, in[0].shape, weak)};
}

// Identity on one operand (name, copy) or on each operand (optimization_barrier, device_put).
ShapeRule identity_rule(std::string name, bool nary) {
  return [name = std::move(name), nary](Avals in, const Params&) -> AvalList {
    if (!nary) expect_arity(name, in, 1);
    return AvalList(in.begin(), in.end());
  };
}

// --- binary -------------------------------------------------------------------------------------

std::string joined_avals(Avals in) {
  std::string out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (i) out += i + 1 == in.size() ? " and " : ", ";
    out += in[i].str_short();
  }
  return out;
}

// Operands are scalars or all of one rank; each dimension is equal across operands or 1 (a size-1
// dimension broadcasts). The result has the broadcast shape.
Shape broadcast_shape(std::string_view prim, Avals in) {
  const Shape* first = nullptr;
  Shape out;
  for (const ShapedArray& a : in) {
    if (a.shape.empty()) continue;
    if (!first) {
      first = &a.shape;
      out = a.shape;
      continue;
    }
    bool ok = a.shape.size() == out.size();
    for (size_t d = 0; ok && d < out.size(); ++d) {
      if (out[d] == a.shape[d] || a.shape[d] == 1) continue;
      if (out[d] == 1)
        out[d] = a.shape[d];
      else
        ok = false;
    }
    if (!ok) fail(prim, fmt::format("incompatible shapes {}", joined_avals(in)));
  }
  return out;
}

void expect_same_dtypes(std::string_view prim, Avals in) {
  for (const ShapedArray& a : in)
    if (a.dtype != in[0].dtype) fail(prim, fmt::format("dtype mismatch {}", joined_avals(in)));
}

enum class BinaryResult { same, bool_ };

ShapeRule binary_rule(std::string name, unsigned accepted, BinaryResult result) {
  return [name = std::move(name), accepted, result](Avals in, const Params& params) -> AvalList {
    expect_arity(name, in, 2);
    Shape shape = broadcast_shape(name, in);
    // mul's out_dtype (hidden when None) lets the operands differ and fixes the result dtype.
    std::optional<DType> out_dtype;
    if (name == "mul") out_dtype = opt_dtype_param(name, params, "out_dtype");
    if (!out_dtype) expect_same_dtypes(name, in);
    for (size_t i = 0; i < in.size(); ++i) expect_dtype(name, in, i, accepted);
    DType t = result == BinaryResult::bool_ ? DType::bool_ : out_dtype.value_or(in[0].dtype);
    return {ShapedArray(t, std::move(shape), all_weak(in))};
  };
}

// pow: a floating base; an integer or same-dtype floating exponent; the base's dtype.
AvalList pow_rule(Avals in, const Params&) {
  expect_arity("pow", in, 2);
  Shape shape = broadcast_shape("pow", in);
  expect_dtype("pow", in, 0, kFloat);
  expect_dtype("pow", in, 1, kNum);
  if (is_floating(in[1].dtype) && in[1].dtype != in[0].dtype)
    fail("pow", fmt::format("dtype mismatch {}", joined_avals(in)));
  return {ShapedArray(in[0].dtype, std::move(shape), all_weak(in))};
}

// add_any (JAX's add_jaxvals): sums two cotangents of one type; no broadcasting.
AvalList add_any_rule(Avals in, const Params&) {
  expect_arity("add_any", in, 2);
  if (in[0].shape != in[1].shape)
    fail("add_any", fmt::format("incompatible shapes {}", joined_avals(in)));
  expect_same_dtypes("add_any", in);
  return {ShapedArray(in[0].dtype, in[0].shape, in[0].weak_type)};
}

// select_n(which, *cases): `which` is bool (at most two cases) or an integer, a scalar or of the
// cases' shape; the cases share one dtype and shape.
AvalList select_n_rule(Avals in, const Params&) {
  expect_min_arity("select_n", in, 2);
  Avals cases = in.subspan(1);
  for (const ShapedArray& c : cases)
    if (c.shape != cases[0].shape) fail_got("select_n", "cases must have the same shape", in);
  if (!in[0].shape.empty() && in[0].shape != cases[0].shape)
    fail_got("select_n", "the predicate must be a scalar or have the cases' shape", in);
  for (const ShapedArray& c : cases)
    if (c.dtype != cases[0].dtype) fail_got("select_n", "cases must have the same dtype", in);
  if (!in_class(in[0].dtype, kBoolOrInt))
    fail_got("select_n", "the predicate must be bool or an integer", in);
  if (in[0].dtype == DType::bool_ && cases.size() > 2)
    fail_got("select_n", "a bool predicate selects between at most 2 cases", in);
  return {ShapedArray(cases[0].dtype, cases[0].shape, all_weak(cases))};
}

// clamp(min, x, max): min and max are scalars or of x's shape; one dtype for all three.
AvalList clamp_rule(Avals in, const Params&) {
  expect_arity("clamp", in, 3);
  const ShapedArray& x = in[1];
  if (!in[0].shape.empty() && in[0].shape != x.shape)
    fail_got("clamp", "min must be a scalar or have the operand's shape", in);
  if (!in[2].shape.empty() && in[2].shape != x.shape)
    fail_got("clamp", "max must be a scalar or have the operand's shape", in);
  expect_same_dtypes("clamp", in);
  for (size_t i = 0; i < 3; ++i) expect_dtype("clamp", in, i, kAny);
  return {ShapedArray(x.dtype, x.shape, all_weak(in))};
}

// Computed by a polynomial or a libm call (Primitive::transcendental).
bool is_transcendental(std::string_view name) {
  static constexpr std::string_view names[] = {
      "exp",   "exp2", "log",  "expm1",   "log1p",  "tanh",    "logistic", "sin",   "cos",
      "tan",   "cbrt", "asin", "acos",    "atan",   "sinh",    "cosh",     "asinh", "acosh",
      "atanh", "erf",  "erfc", "erf_inv", "lgamma", "digamma", "atan2",    "pow"};
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

}  // namespace

void register_elementwise(PrimitiveTable& table) {
  auto elementwise = [](Primitive p) {
    p.elementwise = true;
    p.transcendental = is_transcendental(p.name);
    return p;
  };
  for (const UnarySpec& spec : kUnary) {
    Primitive p = make_primitive(spec.name, unary_rule(spec));
    if (spec.has_accuracy) p.print_params = sorted_hiding_none({"accuracy"});
    table.add(elementwise(std::move(p)));
  }
  table.add(elementwise(make_primitive("integer_pow", integer_pow_rule)));
  table.add(elementwise(make_primitive("round", round_rule)));
  table.add(make_primitive("bitcast_convert_type", bitcast_convert_type_rule));
  table.add(make_primitive("reduce_precision", reduce_precision_rule));

  struct BinarySpec {
    const char* name;
    unsigned accepted;
    BinaryResult result;
  };
  const BinarySpec binaries[] = {
      {"add", kNum, BinaryResult::same},
      {"sub", kNum, BinaryResult::same},
      {"mul", kNum, BinaryResult::same},
      {"div", kNum, BinaryResult::same},
      {"rem", kNum, BinaryResult::same},
      {"max", kAny, BinaryResult::same},
      {"min", kAny, BinaryResult::same},
      {"atan2", kFloat, BinaryResult::same},
      {"and", kBoolOrInt, BinaryResult::same},
      {"or", kBoolOrInt, BinaryResult::same},
      {"xor", kBoolOrInt, BinaryResult::same},
      {"nextafter", kFloat, BinaryResult::same},
      {"shift_left", kInt, BinaryResult::same},
      {"shift_right_logical", kInt, BinaryResult::same},
      {"shift_right_arithmetic", kInt, BinaryResult::same},
      {"eq", kAny | kOpaque, BinaryResult::bool_},
      {"ne", kAny | kOpaque, BinaryResult::bool_},
      {"lt", kAny, BinaryResult::bool_},
      {"le", kAny, BinaryResult::bool_},
      {"gt", kAny, BinaryResult::bool_},
      {"ge", kAny, BinaryResult::bool_},
  };
  for (const BinarySpec& b : binaries) {
    Primitive p = make_primitive(b.name, binary_rule(b.name, b.accepted, b.result));
    // jax >= 0.10: mul carries `out_dtype`, hidden when None.
    if (std::string_view(b.name) == "mul") p.print_params = sorted_hiding_none({"out_dtype"});
    table.add(elementwise(std::move(p)));
  }
  table.add(elementwise(make_primitive("pow", pow_rule)));
  table.add(elementwise(make_primitive("add_any", add_any_rule)));
  table.add(elementwise(make_primitive("select_n", select_n_rule)));
  table.add(elementwise(make_primitive("clamp", clamp_rule)));

  Primitive convert = make_primitive("convert_element_type", convert_element_type_rule);
  convert.print_params = sorted_hiding({"sharding"});  // implied by the binder's type
  convert.canonicalize_params = add_missing({{"sharding", NoneParam{}}});
  table.add(elementwise(std::move(convert)));

  table.add(moves_data(make_primitive("name", identity_rule("name", false))));
  table.add(moves_data(make_primitive("copy", identity_rule("copy", false))));
  // JAX's ad_util.stop_gradient_p: the value, with a zero tangent
  // (passes/ad_rules/elementwise_logical.cc).
  table.add(moves_data(make_primitive("stop_gradient", identity_rule("stop_gradient", false))));
  table.add(moves_data(
      make_primitive("optimization_barrier", identity_rule("optimization_barrier", true))));
}

}  // namespace cjax

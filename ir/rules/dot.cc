// dot_general[dimension_numbers precision preferred_element_type out_sharding]
// (jax/_src/lax/lax.py). The result's dimensions are the batch dimensions, then the free
// dimensions of lhs, then those of rhs.
#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <tuple>

#include "ir/errors.h"
#include "ir/rules/rule_util.h"
#include "ir/rules/table.h"

namespace cjax {
namespace {

using namespace rules;
constexpr std::string_view kPrim = "dot_general";

DotDimensionNumbers dimension_numbers(const Params& params) {
  try {
    return DotDimensionNumbers::from_param(param(kPrim, params, "dimension_numbers"));
  } catch (const TypeError&) {
    throw;
  } catch (const Error& e) {
    fail(kPrim, e.what());
  }
}

// How JAX ranks two operand dtypes to pick the result dtype (after XLA's HigherPrecisionType):
// floating range, then precision, then bit width, then signedness.
auto type_properties(DType t) {
  int maxexp = -1, nmant = -1;
  switch (t) {
    case DType::f16:
      maxexp = 16, nmant = 10;
      break;
    case DType::bf16:
      maxexp = 128, nmant = 7;
      break;
    case DType::f32:
      maxexp = 128, nmant = 23;
      break;
    case DType::f64:
      maxexp = 1024, nmant = 52;
      break;
    default:
      break;
  }
  int bits = t == DType::bool_ ? 1 : static_cast<int>(itemsize(t)) * 8;
  return std::tuple(maxexp, nmant, bits, !is_unsigned_integer(t));
}

void check_dims(std::string_view side, const std::vector<int64_t>& contract,
                const std::vector<int64_t>& batch, int64_t rank, Avals in) {
  std::set<int64_t> seen;
  for (const auto* dims : {&contract, &batch})
    for (int64_t d : *dims) {
      if (d < 0 || d >= rank)
        fail_got(kPrim,
                 fmt::format("{} dimension numbers {} and {} out of range for rank {}", side,
                             ints_str(contract), ints_str(batch), rank),
                 in);
      if (!seen.insert(d).second)
        fail_got(kPrim,
                 fmt::format("{} contracting dimensions {} and batch dimensions {} must be "
                             "distinct",
                             side, ints_str(contract), ints_str(batch)),
                 in);
    }
}

Shape sizes(const Shape& shape, const std::vector<int64_t>& dims) {
  Shape out;
  for (int64_t d : dims) out.push_back(shape[d]);
  return out;
}

Shape free_sizes(const Shape& shape, const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  Shape out;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
    if (std::find(a.begin(), a.end(), d) == a.end() && std::find(b.begin(), b.end(), d) == b.end())
      out.push_back(shape[d]);
  return out;
}

AvalList dot_general_rule(Avals in, const Params& params) {
  expect_arity(kPrim, in, 2);
  const ShapedArray& lhs = in[0];
  const ShapedArray& rhs = in[1];
  DotDimensionNumbers dn = dimension_numbers(params);
  check_dims("lhs", dn.lhs_contract, dn.lhs_batch, lhs.rank(), in);
  check_dims("rhs", dn.rhs_contract, dn.rhs_batch, rhs.rank(), in);
  if (dn.lhs_batch.size() != dn.rhs_batch.size())
    fail_got(kPrim,
             fmt::format("lhs batch dimensions {} and rhs batch dimensions {} differ in number",
                         ints_str(dn.lhs_batch), ints_str(dn.rhs_batch)),
             in);
  if (sizes(lhs.shape, dn.lhs_batch) != sizes(rhs.shape, dn.rhs_batch))
    fail_got(kPrim,
             fmt::format("batch dimensions have different sizes {} and {}",
                         ints_str(sizes(lhs.shape, dn.lhs_batch)),
                         ints_str(sizes(rhs.shape, dn.rhs_batch))),
             in);
  if (sizes(lhs.shape, dn.lhs_contract) != sizes(rhs.shape, dn.rhs_contract))
    fail_got(kPrim,
             fmt::format("contracting dimensions have different sizes {} and {}",
                         ints_str(sizes(lhs.shape, dn.lhs_contract)),
                         ints_str(sizes(rhs.shape, dn.rhs_contract))),
             in);
  expect_dtype(kPrim, in, 0, kAny);
  expect_dtype(kPrim, in, 1, kAny);

  DType result = lhs.dtype;
  if (lhs.dtype != rhs.dtype) {
    auto l = type_properties(lhs.dtype), r = type_properties(rhs.dtype);
    if (l == r) fail_got(kPrim, "operand dtypes are incompatible", in);
    result = l > r ? lhs.dtype : rhs.dtype;
  }
  if (auto preferred = opt_dtype_param(kPrim, params, "preferred_element_type")) {
    if (is_floating(result) && !is_floating(*preferred))
      fail_got(kPrim,
               fmt::format("preferred_element_type {} must be floating for floating operands",
                           long_name(*preferred)),
               in);
    if (!is_floating(result) && *preferred != result && itemsize(*preferred) < itemsize(result))
      fail_got(kPrim,
               fmt::format("preferred_element_type {} must not be narrower than {}",
                           long_name(*preferred), long_name(result)),
               in);
    result = *preferred;
  }

  Shape shape = sizes(lhs.shape, dn.lhs_batch);
  for (int64_t d : free_sizes(lhs.shape, dn.lhs_contract, dn.lhs_batch)) shape.push_back(d);
  for (int64_t d : free_sizes(rhs.shape, dn.rhs_contract, dn.rhs_batch)) shape.push_back(d);
  return {ShapedArray(result, std::move(shape), all_weak(in))};
}

// JAX's rule: drop None-valued params; out_sharding is implied by the binder's type (hidden
// since jax 0.10).
std::vector<ParamRef> dot_general_print(const Params& params) {
  std::vector<ParamRef> out = sorted_params(params);
  std::erase_if(out,
                [](const ParamRef& r) { return r.value->is_none() || r.key == "out_sharding"; });
  return out;
}

// Older text: dimension_numbers with tuples inside, and no precision / preferred_element_type /
// out_sharding params. JAX always binds all four and prints the inner sequences as lists.
void dot_general_canonicalize(Params& params) {
  if (const ParamValue* dn = params.find("dimension_numbers")) {
    try {
      params.set("dimension_numbers", DotDimensionNumbers::from_param(*dn).to_param());
    } catch (const Error&) {
      // Left as read; the shape rule reports it.
    }
  }
  for (const char* key : {"precision", "preferred_element_type", "out_sharding"})
    if (!params.has(key)) params.set(key, NoneParam{});
}

// 2*M*N*K*batch: one multiply and one add per term of every output element.
double dot_general_flops(const Eqn& eqn, const std::function<double(const Jaxpr&)>&) {
  const DotDimensionNumbers dn =
      DotDimensionNumbers::from_param(eqn.params.at("dimension_numbers"));
  const ShapedArray& lhs = eqn.inputs.at(0).aval();
  double k = 1;
  for (int64_t d : dn.lhs_contract) k *= static_cast<double>(lhs.shape.at(static_cast<size_t>(d)));
  return 2 * static_cast<double>(eqn.outputs.at(0).aval().size()) * k;
}

}  // namespace

void register_dot(PrimitiveTable& table) {
  Primitive p = make_primitive("dot_general", dot_general_rule);
  p.print_params = dot_general_print;
  p.canonicalize_params = dot_general_canonicalize;
  table.add(with_flop_rule(std::move(p), dot_general_flops));
}

}  // namespace cjax

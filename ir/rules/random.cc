// JAX's PRNG primitives (jax/_src/prng.py), over typed key arrays `key<fry>[...]`: random_seed,
// random_wrap / random_unwrap (keys <-> their u32 words), random_split, random_fold_in,
// random_bits, and threefry2x32, the hash they are built on.
#include <fmt/format.h>

#include "ir/rules/rule_util.h"
#include "ir/rules/table.h"

namespace cjax {
namespace {

using namespace rules;

void expect_keys(std::string_view prim, Avals in, size_t i) {
  if (in[i].dtype != DType::key_fry)
    fail_got(prim, fmt::format("operand {} must be a key array (key<fry>), got {}", i, str(in[i])),
             in);
}

void expect_impl(std::string_view prim, const Params& params) {
  const ParamValue& impl = param(prim, params, "impl");
  if (!impl.is<std::string>() || impl.as<std::string>() != "fry")
    fail(prim, "only the threefry implementation (impl=fry) is supported");
}

// random_seed[impl]: integer seeds -> keys of the same shape.
AvalList seed_rule(Avals in, const Params& params) {
  expect_arity("random_seed", in, 1);
  expect_impl("random_seed", params);
  expect_dtype("random_seed", in, 0, kInt);
  return {ShapedArray(DType::key_fry, in[0].shape)};
}

// random_wrap[impl]: u32[..., 2] -> key<fry>[...].
AvalList wrap_rule(Avals in, const Params& params) {
  expect_arity("random_wrap", in, 1);
  expect_impl("random_wrap", params);
  if (in[0].dtype != DType::u32 || in[0].rank() < 1 || in[0].shape.back() != 2)
    fail_got("random_wrap", "key data must be u32[..., 2] for impl=fry", in);
  Shape s = in[0].shape;
  s.pop_back();
  return {ShapedArray(DType::key_fry, s)};
}

// random_unwrap: key<fry>[...] -> u32[..., 2].
AvalList unwrap_rule(Avals in, const Params&) {
  expect_arity("random_unwrap", in, 1);
  expect_keys("random_unwrap", in, 0);
  Shape s = in[0].shape;
  s.push_back(2);
  return {ShapedArray(DType::u32, s)};
}

// random_split[shape]: each key -> `shape` new keys (JAX before 0.4.16 printed
// random_split[count=n], n keys).
AvalList split_rule(Avals in, const Params& params) {
  expect_arity("random_split", in, 1);
  expect_keys("random_split", in, 0);
  Shape s = in[0].shape;
  const std::vector<int64_t> shape =
      !params.has("shape") && params.has("count")
          ? std::vector<int64_t>{int_param("random_split", params, "count")}
          : ints_param("random_split", params, "shape");
  for (int64_t d : shape) {
    if (d < 0) fail("random_split", fmt::format("negative dimension {} in shape", d));
    s.push_back(d);
  }
  return {ShapedArray(DType::key_fry, s)};
}

// random_fold_in: (keys, u32 messages of the same shape, or one) -> keys.
AvalList fold_in_rule(Avals in, const Params&) {
  expect_arity("random_fold_in", in, 2);
  expect_keys("random_fold_in", in, 0);
  if (in[1].dtype != DType::u32) fail_got("random_fold_in", "the message must be u32", in);
  if (in[1].rank() != 0 && in[1].shape != in[0].shape)
    fail_got("random_fold_in", "the message must be a scalar or have the keys' shape", in);
  return {ShapedArray(DType::key_fry, in[0].shape)};
}

// random_bits[bit_width shape]: keys[...] -> u{bit_width}[..., *shape].
AvalList bits_rule(Avals in, const Params& params) {
  expect_arity("random_bits", in, 1);
  expect_keys("random_bits", in, 0);
  const int64_t width = int_param("random_bits", params, "bit_width");
  DType t = DType::u32;
  switch (width) {
    case 8:
      t = DType::u8;
      break;
    case 16:
      t = DType::u16;
      break;
    case 32:
      t = DType::u32;
      break;
    case 64:
      t = DType::u64;
      break;
    default:
      fail("random_bits", fmt::format("bit_width must be 8, 16, 32 or 64, got {}", width));
  }
  Shape s = in[0].shape;
  for (int64_t d : ints_param("random_bits", params, "shape")) {
    if (d < 0) fail("random_bits", fmt::format("negative dimension {} in shape", d));
    s.push_back(d);
  }
  return {ShapedArray(t, s)};
}

// threefry2x32: (key word 0, key word 1, count word 0, count word 1), u32 of one shape (scalars
// broadcast) -> the two hashed words.
AvalList threefry_rule(Avals in, const Params&) {
  expect_arity("threefry2x32", in, 4);
  Shape shape;
  for (size_t i = 0; i < 4; ++i) {
    if (in[i].dtype != DType::u32) fail_got("threefry2x32", "every operand must be u32", in);
    if (in[i].rank() == 0) continue;
    if (!shape.empty() && in[i].shape != shape)
      fail_got("threefry2x32", "the operands must have one shape (or be scalars)", in);
    shape = in[i].shape;
  }
  return {ShapedArray(DType::u32, shape), ShapedArray(DType::u32, shape)};
}

}  // namespace

void register_random(PrimitiveTable& table) {
  table.add(moves_data(make_primitive("random_seed", seed_rule)));
  table.add(moves_data(make_primitive("random_wrap", wrap_rule)));
  table.add(moves_data(make_primitive("random_unwrap", unwrap_rule)));
  table.add(make_primitive("random_split", split_rule));
  table.add(make_primitive("random_fold_in", fold_in_rule));
  table.add(make_primitive("random_bits", bits_rule));
  table.add(make_primitive("threefry2x32", threefry_rule));
}

}  // namespace cjax

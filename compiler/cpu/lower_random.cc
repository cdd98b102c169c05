// JAX's threefry PRNG compiled natively: typed keys are i64 elements (the two u32 words, first
// word low, as they lie in memory), and random_seed, random_split, random_fold_in and
// random_bits are linalg.generics whose bodies run Threefry-2x32's 20 rounds on 32-bit integers,
// so their loops vectorize like any elementwise op. split and random_bits hash each output
// position's index: jax_threefry_partitionable's scheme, which the lowering bakes in (the jit
// cache keys on the mode). In the classic scheme, and for what is rarely hot (random_wrap,
// random_unwrap, batched keys), the eqn runs the interpreter's kernel instead.
#include <fmt/format.h>
#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/Linalg/IR/Linalg.h>
#include <mlir/Dialect/Tensor/IR/Tensor.h>

#include <utility>

#include "compiler/cpu/lowering.h"
#include "ir/primitive.h"
#include "runtime/threefry.h"

namespace cjax::lower {
namespace {

using mlir::Location;
using mlir::OpBuilder;
using mlir::Value;
using mlir::ValueRange;
namespace arith = mlir::arith;

Value i32c(OpBuilder& b, Location loc, uint32_t v) {
  return b.create<arith::ConstantOp>(loc, b.getI32IntegerAttr(static_cast<int32_t>(v)));
}
Value i64c(OpBuilder& b, Location loc, int64_t v) {
  return b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(v));
}

// A key's words: (low 32 bits, high 32 bits) of its i64.
std::pair<Value, Value> key_words(OpBuilder& b, Location loc, Value key) {
  Value lo = b.create<arith::TruncIOp>(loc, b.getI32Type(), key);
  Value hi = b.create<arith::TruncIOp>(loc, b.getI32Type(),
                                       b.create<arith::ShRUIOp>(loc, key, i64c(b, loc, 32)));
  return {lo, hi};
}
Value pack_key(OpBuilder& b, Location loc, Value w0, Value w1) {
  Value lo = b.create<arith::ExtUIOp>(loc, b.getI64Type(), w0);
  Value hi = b.create<arith::ExtUIOp>(loc, b.getI64Type(), w1);
  return b.create<arith::OrIOp>(loc, lo, b.create<arith::ShLIOp>(loc, hi, i64c(b, loc, 32)));
}

// Threefry's key schedule: the key's words and their parity word.
struct KeySchedule {
  Value ks[3];
};
KeySchedule schedule(OpBuilder& b, Location loc, Value key) {
  auto [k0, k1] = key_words(b, loc, key);
  return {{k0, k1,
           b.create<arith::XOrIOp>(loc, b.create<arith::XOrIOp>(loc, k0, k1),
                                   i32c(b, loc, 0x1BD11BDAu))}};
}

// Threefry-2x32, 20 rounds (runtime/threefry.cc's, op for op): (x0, x1) hashed under the key.
std::pair<Value, Value> threefry(OpBuilder& b, Location loc, const KeySchedule& key, Value x0,
                                 Value x1) {
  static constexpr int kRotations[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  auto add = [&](Value x, Value y) -> Value { return b.create<arith::AddIOp>(loc, x, y); };
  auto rotl = [&](Value v, int r) -> Value {
    Value left = b.create<arith::ShLIOp>(loc, v, i32c(b, loc, uint32_t(r)));
    Value right = b.create<arith::ShRUIOp>(loc, v, i32c(b, loc, uint32_t(32 - r)));
    return b.create<arith::OrIOp>(loc, left, right);
  };
  const Value* ks = key.ks;
  x0 = add(x0, ks[0]);
  x1 = add(x1, ks[1]);
  for (uint32_t group = 0; group < 5; ++group) {
    for (int r : kRotations[group % 2]) {
      x0 = add(x0, x1);
      x1 = b.create<arith::XOrIOp>(loc, rotl(x1, r), x0);
    }
    x0 = add(x0, ks[(group + 1) % 3]);
    x1 = add(add(x1, ks[(group + 2) % 3]), i32c(b, loc, group + 1));
  }
  return {x0, x1};
}

// The output position's row-major index as (high, low) 32-bit words (JAX's iota_2x32_shape).
// Below 2^32 positions the high word is 0 and the index is computed in 32 bits, which keeps
// 64-bit vector arithmetic (slow without AVX-512) out of the loop, so LLVM vectorizes it.
std::pair<Value, Value> index_words(OpBuilder& b, Location loc, const Shape& shape) {
  int64_t total = 1;
  for (int64_t d : shape) total *= d;
  const bool narrow = total <= (int64_t{1} << 32);
  mlir::Type t = narrow ? b.getI32Type() : b.getI64Type();
  auto c = [&](int64_t v) -> Value {
    return b.create<arith::ConstantOp>(loc, b.getIntegerAttr(t, v));
  };
  Value flat;
  for (size_t d = 0; d < shape.size(); ++d) {
    Value i = b.create<arith::IndexCastUIOp>(loc, t, b.create<mlir::linalg::IndexOp>(loc, d));
    flat = flat ? Value(b.create<arith::AddIOp>(loc,
                                                b.create<arith::MulIOp>(loc, flat, c(shape[d])), i))
                : i;
  }
  if (!flat) flat = c(0);
  if (narrow) return {i32c(b, loc, 0), flat};
  Value lo = b.create<arith::TruncIOp>(loc, b.getI32Type(), flat);
  Value hi = b.create<arith::TruncIOp>(loc, b.getI32Type(),
                                       b.create<arith::ShRUIOp>(loc, flat, i64c(b, loc, 32)));
  return {hi, lo};
}

// The position-hashing scheme needs one key and the partitionable mode.
void expect_single_key_partitionable(const EqnLowering& el) {
  if (!runtime::threefry_partitionable())
    not_native(el, "the classic threefry scheme (jax_threefry_partitionable off)");
  if (el.eqn.inputs[0].aval().rank() != 0) not_native(el, "an array of keys");
}

// The one key of a random_bits or split, read and scheduled before the loop: the loop body is
// then 32-bit arithmetic on loop-invariant scalars, which LLVM vectorizes (a key reread and
// split into words per element kept it scalar, 7x slower).
KeySchedule hoisted_key(EqnLowering& el, Value key_tensor) {
  OpBuilder& b = el.b();
  Value key = b.create<mlir::tensor::ExtractOp>(el.loc, key_tensor, mlir::ValueRange{});
  return schedule(b, el.loc, key);
}

std::vector<Value> random_bits(EqnLowering& el, const std::vector<Value>& in) {
  expect_single_key_partitionable(el);
  const ShapedArray& out = el.eqn.outputs[0].aval();
  const int64_t width = el.eqn.params.get_int("bit_width");
  const KeySchedule key = hoisted_key(el, in[0]);
  return {elementwise(el, {}, out, [&](OpBuilder& b, Location loc, ValueRange) -> Value {
    auto [hi, lo] = index_words(b, loc, out.shape);
    auto [x0, x1] = threefry(b, loc, key, hi, lo);
    if (width == 64) return pack_key(b, loc, x1, x0);  // x0 the high word, x1 the low one
    Value bits = b.create<arith::XOrIOp>(loc, x0, x1);
    if (width == 32) return bits;
    return b.create<arith::TruncIOp>(loc, b.getIntegerType(unsigned(width)), bits);
  })};
}

std::vector<Value> random_split(EqnLowering& el, const std::vector<Value>& in) {
  expect_single_key_partitionable(el);
  const ShapedArray& out = el.eqn.outputs[0].aval();
  const KeySchedule key = hoisted_key(el, in[0]);
  return {elementwise(el, {}, out, [&](OpBuilder& b, Location loc, ValueRange) -> Value {
    auto [hi, lo] = index_words(b, loc, out.shape);
    auto [x0, x1] = threefry(b, loc, key, hi, lo);
    return pack_key(b, loc, x0, x1);
  })};
}

// fold_in(key, data): the key hashed with the counter (0, data); the same in both schemes.
std::vector<Value> random_fold_in(EqnLowering& el, const std::vector<Value>& in) {
  const ShapedArray& out = el.eqn.outputs[0].aval();
  return {elementwise(el, in, out, [&](OpBuilder& b, Location loc, ValueRange a) -> Value {
    auto [x0, x1] = threefry(b, loc, schedule(b, loc, a[0]), i32c(b, loc, 0), a[1]);
    return pack_key(b, loc, x0, x1);
  })};
}

// random_seed: the key (high word of a 64-bit seed or 0, the low 32 bits).
std::vector<Value> random_seed(EqnLowering& el, const std::vector<Value>& in) {
  const ShapedArray& out = el.eqn.outputs[0].aval();
  const DType seed = el.eqn.inputs[0].aval().dtype;
  if (!is_integer(seed)) not_native(el, "a non-integer seed");
  const bool wide = itemsize(seed) == 8, is_signed = !is_unsigned_integer(seed);
  return {elementwise(el, in, out, [&](OpBuilder& b, Location loc, ValueRange a) -> Value {
    Value s = a[0];
    if (!wide)
      s = is_signed ? Value(b.create<arith::ExtSIOp>(loc, b.getI64Type(), s))
                    : Value(b.create<arith::ExtUIOp>(loc, b.getI64Type(), s));
    auto [low, high] = key_words(b, loc, s);
    return pack_key(b, loc, wide ? high : i32c(b, loc, 0), low);
  })};
}

}  // namespace

void register_random_rules(LowerRuleTable& t) {
  t.add("random_bits", random_bits);
  t.add("random_split", random_split);
  t.add("random_fold_in", random_fold_in);
  t.add("random_seed", random_seed);
}

}  // namespace cjax::lower

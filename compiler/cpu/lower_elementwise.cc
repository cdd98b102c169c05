// Elementwise primitives: one linalg.generic each, whose body is the scalar operation; the
// elementwise-fusion pass later merges chains of them into one loop nest. Integer operations
// whose semantics need care (division, float-to-int conversion) go to the interpreter's kernel
// through a runtime call (lower_runtime_calls.cc) instead; shifts are guarded to lax's meaning.
#include <fmt/format.h>
#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/Dialect/Math/IR/Math.h>

#include <limits>

#include "compiler/cpu/lowering.h"
#include "ir/errors.h"
#include "ir/lax_params.h"
#include "ir/primitive.h"
#include "runtime/kernels/erf_inv.h"

namespace cjax::lower {
namespace {

using mlir::Location;
using mlir::OpBuilder;
using mlir::Value;
using mlir::ValueRange;
namespace arith = mlir::arith;
namespace math = mlir::math;

DType in_dtype(const EqnLowering& el, size_t i = 0) {
  return el.eqn.inputs[i].aval().dtype;
}

Value fconst(OpBuilder& b, Location loc, Value like, double v) {
  return b.create<arith::ConstantOp>(loc, b.getFloatAttr(like.getType(), v));
}

// A call to a libm function (erfcf / erfc ...), declared once per module.
Value libm_call(EqnLowering& el, OpBuilder& b, Location loc, const std::string& f32_name,
                ValueRange args) {
  const bool is_f32 = args[0].getType().isF32();
  const std::string name = is_f32 ? f32_name : f32_name.substr(0, f32_name.size() - 1);
  mlir::ModuleOp module = el.state.module;
  if (!module.lookupSymbol<mlir::func::FuncOp>(name)) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    std::vector<mlir::Type> types(args.size(), args[0].getType());
    auto f = b.create<mlir::func::FuncOp>(loc, name, b.getFunctionType(types, {args[0].getType()}));
    f.setPrivate();
  }
  return b.create<mlir::func::CallOp>(loc, name, mlir::TypeRange{args[0].getType()}, args)
      .getResult(0);
}

using FloatFn = std::function<Value(EqnLowering&, OpBuilder&, Location, ValueRange)>;

// erf_inv on float32 as the interpreter's kernel computes it (runtime/kernels/erf_inv.h): both
// polynomials are evaluated and one is selected, so the loop vectorizes.
Value erf_inv_f32(OpBuilder& b, Location loc, Value x) {
  auto c = [&](double v) { return fconst(b, loc, x, v); };
  auto horner = [&](const auto& coeffs, Value w) {
    Value p = c(coeffs[0]);
    for (size_t i = 1; i < coeffs.size(); ++i)
      p = b.create<arith::AddFOp>(loc, c(coeffs[i]), b.create<arith::MulFOp>(loc, p, w));
    return p;
  };
  Value one = c(1.0);
  Value prod = b.create<arith::MulFOp>(loc, b.create<arith::SubFOp>(loc, one, x),
                                       b.create<arith::AddFOp>(loc, one, x));
  Value w = b.create<arith::NegFOp>(loc, b.create<math::LogOp>(loc, prod));
  Value central =
      b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, w, c(runtime::kErfInvSplit));
  Value p_central = horner(runtime::kErfInvCentral,
                           b.create<arith::SubFOp>(loc, w, c(runtime::kErfInvCentralShift)));
  Value p_tail = horner(
      runtime::kErfInvTail,
      b.create<arith::SubFOp>(loc, b.create<math::SqrtOp>(loc, w), c(runtime::kErfInvTailShift)));
  Value p = b.create<arith::SelectOp>(loc, central, p_central, p_tail);
  Value r = b.create<arith::MulFOp>(loc, p, x);
  Value at_one =
      b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OEQ, b.create<math::AbsFOp>(loc, x), one);
  Value inf = b.create<arith::MulFOp>(loc, x, c(std::numeric_limits<double>::infinity()));
  return b.create<arith::SelectOp>(loc, at_one, inf, r);
}

// A rule for a float-only elementwise primitive.
LowerRule float_rule(FloatFn f) {
  return [f](EqnLowering& el, const std::vector<Value>& in) -> std::vector<Value> {
    if (!is_floating(el.eqn.outputs[0].aval().dtype))
      not_native(el, fmt::format("only float arrays are compiled, got {}",
                                 el.eqn.outputs[0].aval().str_short()));
    return {
        elementwise(el, in, el.eqn.outputs[0].aval(),
                    [&](OpBuilder& b, Location loc, ValueRange a) { return f(el, b, loc, a); })};
  };
}

template <class Op>
FloatFn unary_op() {
  return [](EqnLowering&, OpBuilder& b, Location loc, ValueRange a) -> Value {
    return b.create<Op>(loc, a[0]);
  };
}

FloatFn libm(std::string f32_name) {
  return [f32_name](EqnLowering& el, OpBuilder& b, Location loc, ValueRange a) -> Value {
    std::vector<Value> args(a.begin(), a.begin() + static_cast<long>(el.eqn.inputs.size()));
    return libm_call(el, b, loc, f32_name, args);
  };
}

// A rule for primitives defined on floats and integers alike (and bools for the bitwise ones).
struct TypedOps {
  std::function<Value(OpBuilder&, Location, ValueRange)> on_float, on_signed, on_unsigned, on_bool;
};

LowerRule typed_rule(TypedOps ops) {
  return [ops](EqnLowering& el, const std::vector<Value>& in) -> std::vector<Value> {
    const DType t = in_dtype(el);
    const auto& f = is_floating(t)           ? ops.on_float
                    : t == DType::bool_      ? ops.on_bool
                    : is_unsigned_integer(t) ? ops.on_unsigned
                                             : ops.on_signed;
    if (!f) not_native(el, fmt::format("no compiled form for {} operands", short_name(t)));
    std::vector<Value> operands = in;
    return {elementwise(el, operands, el.eqn.outputs[0].aval(),
                        [&](OpBuilder& b, Location loc, ValueRange a) { return f(b, loc, a); })};
  };
}

template <class Op>
std::function<Value(OpBuilder&, Location, ValueRange)> binary() {
  return [](OpBuilder& b, Location loc, ValueRange a) -> Value {
    return b.create<Op>(loc, a[0], a[1]);
  };
}

template <class FOp, class IOp>
TypedOps arith_binary() {
  return {binary<FOp>(), binary<IOp>(), binary<IOp>(), {}};
}

TypedOps compare(arith::CmpFPredicate f, arith::CmpIPredicate s, arith::CmpIPredicate u) {
  auto on_f = [f](OpBuilder& b, Location loc, ValueRange a) -> Value {
    return b.create<arith::CmpFOp>(loc, f, a[0], a[1]);
  };
  auto on_i = [](arith::CmpIPredicate p) {
    return [p](OpBuilder& b, Location loc, ValueRange a) -> Value {
      return b.create<arith::CmpIOp>(loc, p, a[0], a[1]);
    };
  };
  return {on_f, on_i(s), on_i(u), on_i(u)};
}

Value integer_power(OpBuilder& b, Location loc, Value x, int64_t y) {
  const bool is_float = mlir::isa<mlir::FloatType>(x.getType());
  auto one = is_float ? fconst(b, loc, x, 1.0)
                      : Value(b.create<arith::ConstantOp>(loc, b.getIntegerAttr(x.getType(), 1)));
  auto mul = [&](Value p, Value q) -> Value {
    return is_float ? Value(b.create<arith::MulFOp>(loc, p, q))
                    : Value(b.create<arith::MulIOp>(loc, p, q));
  };
  // Square-and-multiply, as lax.integer_pow expands it.
  uint64_t n = y < 0 ? static_cast<uint64_t>(-(y + 1)) + 1 : static_cast<uint64_t>(y);
  Value acc, base = x;
  while (n > 0) {
    if (n & 1) acc = acc ? mul(acc, base) : base;
    n >>= 1;
    if (n > 0) base = mul(base, base);
  }
  if (!acc) acc = one;
  if (y < 0) acc = b.create<arith::DivFOp>(loc, one, acc);
  return acc;
}

// convert_element_type between the types compiled natively (float->int goes to the runtime).
Value convert(OpBuilder& b, Location loc, Value x, DType from, DType to) {
  mlir::Type target = element_type(b, to, "convert_element_type");
  if (from == to) return x;
  if (to == DType::bool_) {
    if (is_floating(from))
      return b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNE, x, fconst(b, loc, x, 0.0));
    Value zero = b.create<arith::ConstantOp>(loc, b.getIntegerAttr(x.getType(), 0));
    return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, x, zero);
  }
  const unsigned from_bits = x.getType().getIntOrFloatBitWidth();
  const unsigned to_bits = target.getIntOrFloatBitWidth();
  if (is_floating(from) && is_floating(to))
    return to_bits > from_bits ? Value(b.create<arith::ExtFOp>(loc, target, x))
                               : Value(b.create<arith::TruncFOp>(loc, target, x));
  const bool from_unsigned = from == DType::bool_ || is_unsigned_integer(from);
  if (is_floating(to))
    return from_unsigned ? Value(b.create<arith::UIToFPOp>(loc, target, x))
                         : Value(b.create<arith::SIToFPOp>(loc, target, x));
  if (to_bits == from_bits) return x;  // i32 <-> u32: the same bits
  if (to_bits < from_bits) return b.create<arith::TruncIOp>(loc, target, x);
  return from_unsigned ? Value(b.create<arith::ExtUIOp>(loc, target, x))
                       : Value(b.create<arith::ExtSIOp>(loc, target, x));
}

// lax's shifts (XLA's): an amount of the bit width or more, or a negative one (read unsigned),
// gives 0, or the sign for an arithmetic right shift, where LLVM's shift would be poison.
template <class ShiftOp, bool kArithmetic>
Value lax_shift(OpBuilder& b, Location loc, ValueRange a) {
  mlir::Type t = a[0].getType();
  const unsigned width = t.getIntOrFloatBitWidth();
  Value bits = b.create<arith::ConstantOp>(loc, b.getIntegerAttr(t, width));
  Value in_range = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, a[1], bits);
  if (kArithmetic) {
    Value top = b.create<arith::ConstantOp>(loc, b.getIntegerAttr(t, width - 1));
    return b.create<ShiftOp>(loc, a[0], b.create<arith::SelectOp>(loc, in_range, a[1], top));
  }
  Value zero = b.create<arith::ConstantOp>(loc, b.getIntegerAttr(t, 0));
  return b.create<arith::SelectOp>(loc, in_range, b.create<ShiftOp>(loc, a[0], a[1]), zero);
}

// bitcast_convert_type between dtypes of one width (u32 <-> f32, ...): the same bits.
std::vector<Value> bitcast_rule(EqnLowering& el, const std::vector<Value>& in) {
  const ShapedArray& out = el.eqn.outputs[0].aval();
  const DType from = in_dtype(el);
  if (itemsize(from) != itemsize(out.dtype) || from == DType::bool_ || out.dtype == DType::bool_)
    not_native(el, "a bitcast that changes the element width");
  mlir::Type to = element_type(el.b(), out.dtype, "bitcast_convert_type");
  return {elementwise(el, in, out, [&](OpBuilder& b, Location loc, ValueRange a) -> Value {
    return b.create<arith::BitcastOp>(loc, to, a[0]);
  })};
}

std::vector<Value> identity_rule(EqnLowering&, const std::vector<Value>& in) {
  return in;
}

}  // namespace

void register_elementwise_rules(LowerRuleTable& t) {
  t.add("add", typed_rule(arith_binary<arith::AddFOp, arith::AddIOp>()));
  t.add("add_any", typed_rule(arith_binary<arith::AddFOp, arith::AddIOp>()));
  t.add("sub", typed_rule(arith_binary<arith::SubFOp, arith::SubIOp>()));
  t.add("mul", typed_rule(arith_binary<arith::MulFOp, arith::MulIOp>()));
  t.add("max", typed_rule({binary<arith::MaximumFOp>(), binary<arith::MaxSIOp>(),
                           binary<arith::MaxUIOp>(), binary<arith::OrIOp>()}));
  t.add("min", typed_rule({binary<arith::MinimumFOp>(), binary<arith::MinSIOp>(),
                           binary<arith::MinUIOp>(), binary<arith::AndIOp>()}));
  t.add(
      "and",
      typed_rule({{}, binary<arith::AndIOp>(), binary<arith::AndIOp>(), binary<arith::AndIOp>()}));
  t.add("or",
        typed_rule({{}, binary<arith::OrIOp>(), binary<arith::OrIOp>(), binary<arith::OrIOp>()}));
  t.add(
      "xor",
      typed_rule({{}, binary<arith::XOrIOp>(), binary<arith::XOrIOp>(), binary<arith::XOrIOp>()}));
  auto bit_not = [](OpBuilder& b, Location loc, ValueRange a) -> Value {
    Value ones = b.create<arith::ConstantOp>(loc, b.getIntegerAttr(a[0].getType(), -1));
    return b.create<arith::XOrIOp>(loc, a[0], ones);
  };
  t.add("not", typed_rule({{}, bit_not, bit_not, bit_not}));
  auto shl = lax_shift<arith::ShLIOp, false>, shrl = lax_shift<arith::ShRUIOp, false>,
       shra = lax_shift<arith::ShRSIOp, true>;
  t.add("shift_left", typed_rule({{}, shl, shl, {}}));
  t.add("shift_right_logical", typed_rule({{}, shrl, shrl, {}}));
  t.add("shift_right_arithmetic", typed_rule({{}, shra, shra, {}}));
  t.add("bitcast_convert_type", bitcast_rule);
  using FP = arith::CmpFPredicate;
  using IP = arith::CmpIPredicate;
  t.add("eq", typed_rule(compare(FP::OEQ, IP::eq, IP::eq)));
  t.add("ne", typed_rule(compare(FP::UNE, IP::ne, IP::ne)));
  t.add("lt", typed_rule(compare(FP::OLT, IP::slt, IP::ult)));
  t.add("le", typed_rule(compare(FP::OLE, IP::sle, IP::ule)));
  t.add("gt", typed_rule(compare(FP::OGT, IP::sgt, IP::ugt)));
  t.add("ge", typed_rule(compare(FP::OGE, IP::sge, IP::uge)));
  auto neg_i = [](OpBuilder& b, Location loc, ValueRange a) -> Value {
    Value zero = b.create<arith::ConstantOp>(loc, b.getIntegerAttr(a[0].getType(), 0));
    return b.create<arith::SubIOp>(loc, zero, a[0]);
  };
  t.add("neg", typed_rule({[](OpBuilder& b, Location loc, ValueRange a) -> Value {
                             return b.create<arith::NegFOp>(loc, a[0]);
                           },
                           neg_i,
                           neg_i,
                           {}}));
  t.add("abs", typed_rule({[](OpBuilder& b, Location loc, ValueRange a) -> Value {
                             return b.create<math::AbsFOp>(loc, a[0]);
                           },
                           [](OpBuilder& b, Location loc, ValueRange a) -> Value {
                             Value zero = b.create<arith::ConstantOp>(
                                 loc, b.getIntegerAttr(a[0].getType(), 0));
                             Value neg = b.create<arith::SubIOp>(loc, zero, a[0]);
                             Value lt = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt,
                                                                a[0], zero);
                             return b.create<arith::SelectOp>(loc, lt, neg, a[0]);
                           },
                           {},
                           {}}));
  t.add("div", float_rule([](EqnLowering&, OpBuilder& b, Location loc, ValueRange a) -> Value {
          return b.create<arith::DivFOp>(loc, a[0], a[1]);
        }));
  t.add("rem", float_rule([](EqnLowering&, OpBuilder& b, Location loc, ValueRange a) -> Value {
          return b.create<arith::RemFOp>(loc, a[0], a[1]);
        }));
  t.add("pow", [](EqnLowering& el, const std::vector<Value>& in) -> std::vector<Value> {
    const DType ed = in_dtype(el, 1);
    if (!is_floating(in_dtype(el)) || (!is_floating(ed) && !is_signed_integer(ed)))
      not_native(el, "only float bases with float or signed integer exponents are compiled");
    return {elementwise(el, in, el.eqn.outputs[0].aval(),
                        [&](OpBuilder& b, Location loc, ValueRange a) -> Value {
                          Value y = a[1];
                          if (!is_floating(ed))
                            y = b.create<arith::SIToFPOp>(loc, a[0].getType(), y);
                          return b.create<math::PowFOp>(loc, a[0], y);
                        })};
  });
  t.add("atan2", float_rule([](EqnLowering&, OpBuilder& b, Location loc, ValueRange a) -> Value {
          return b.create<math::Atan2Op>(loc, a[0], a[1]);
        }));
  t.add("nextafter", float_rule(libm("nextafterf")));
  t.add("exp", float_rule(unary_op<math::ExpOp>()));
  t.add("exp2", float_rule(unary_op<math::Exp2Op>()));
  t.add("expm1", float_rule(libm("expm1f")));
  t.add("log", float_rule(unary_op<math::LogOp>()));
  t.add("log1p", float_rule(libm("log1pf")));
  t.add("tanh", float_rule(unary_op<math::TanhOp>()));
  t.add("sin", float_rule(unary_op<math::SinOp>()));
  t.add("cos", float_rule(unary_op<math::CosOp>()));
  t.add("tan", float_rule(unary_op<math::TanOp>()));
  t.add("asin", float_rule(unary_op<math::AsinOp>()));
  t.add("acos", float_rule(unary_op<math::AcosOp>()));
  t.add("atan", float_rule(unary_op<math::AtanOp>()));
  t.add("sinh", float_rule(unary_op<math::SinhOp>()));
  t.add("cosh", float_rule(unary_op<math::CoshOp>()));
  t.add("asinh", float_rule(unary_op<math::AsinhOp>()));
  t.add("acosh", float_rule(unary_op<math::AcoshOp>()));
  t.add("atanh", float_rule(unary_op<math::AtanhOp>()));
  t.add("sqrt", float_rule(unary_op<math::SqrtOp>()));
  t.add("cbrt", float_rule(unary_op<math::CbrtOp>()));
  t.add("erf", float_rule(unary_op<math::ErfOp>()));
  t.add("erfc", float_rule(libm("erfcf")));
  t.add("lgamma", float_rule(libm("lgammaf")));
  t.add("erf_inv", [](EqnLowering& el, const std::vector<Value>& in) -> std::vector<Value> {
    // float64 runs on the interpreter's kernel (Newton steps on erf there).
    if (el.eqn.outputs[0].aval().dtype != DType::f32)
      not_native(el, fmt::format("erf_inv is compiled for float32 only, got {}",
                                 el.eqn.outputs[0].aval().str_short()));
    return float_rule([](EqnLowering&, OpBuilder& b, Location loc, ValueRange a) {
      return erf_inv_f32(b, loc, a[0]);
    })(el, in);
  });
  t.add("floor", float_rule(unary_op<math::FloorOp>()));
  t.add("ceil", float_rule(unary_op<math::CeilOp>()));
  t.add("round", float_rule([](EqnLowering& el, OpBuilder& b, Location loc, ValueRange a) -> Value {
          const ParamValue* m = el.eqn.params.find("rounding_method");
          const bool to_even = m && m->is<int64_t>() && m->as<int64_t>() == 1;
          return to_even ? Value(b.create<math::RoundEvenOp>(loc, a[0]))
                         : Value(b.create<math::RoundOp>(loc, a[0]));
        }));
  t.add("rsqrt", float_rule([](EqnLowering&, OpBuilder& b, Location loc, ValueRange a) -> Value {
          return b.create<arith::DivFOp>(loc, fconst(b, loc, a[0], 1.0),
                                         b.create<math::SqrtOp>(loc, a[0]));
        }));
  t.add("logistic", float_rule([](EqnLowering&, OpBuilder& b, Location loc, ValueRange a) -> Value {
          Value one = fconst(b, loc, a[0], 1.0);
          Value e = b.create<math::ExpOp>(loc, b.create<arith::NegFOp>(loc, a[0]));
          return b.create<arith::DivFOp>(loc, one, b.create<arith::AddFOp>(loc, one, e));
        }));
  t.add("square", typed_rule(TypedOps{[](OpBuilder& b, Location loc, ValueRange a) -> Value {
                                        return b.create<arith::MulFOp>(loc, a[0], a[0]);
                                      },
                                      [](OpBuilder& b, Location loc, ValueRange a) -> Value {
                                        return b.create<arith::MulIOp>(loc, a[0], a[0]);
                                      },
                                      {},
                                      {}}));
  t.add("integer_pow", [](EqnLowering& el, const std::vector<Value>& in) -> std::vector<Value> {
    const int64_t y = el.eqn.params.get_int("y");
    if (y < 0 && !is_floating(in_dtype(el))) not_native(el, "negative powers of integers");
    return {elementwise(
        el, in, el.eqn.outputs[0].aval(),
        [&](OpBuilder& b, Location loc, ValueRange a) { return integer_power(b, loc, a[0], y); })};
  });
  t.add("sign", float_rule([](EqnLowering&, OpBuilder& b, Location loc, ValueRange a) -> Value {
          // sign(x) = 1, -1, or x itself for ±0 and NaN.
          Value x = a[0], zero = fconst(b, loc, x, 0.0);
          Value pos = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, x, zero);
          Value neg = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, x, zero);
          Value r = b.create<arith::SelectOp>(loc, neg, fconst(b, loc, x, -1.0), x);
          return b.create<arith::SelectOp>(loc, pos, fconst(b, loc, x, 1.0), r);
        }));
  t.add("is_finite", [](EqnLowering& el, const std::vector<Value>& in) -> std::vector<Value> {
    if (!is_floating(in_dtype(el))) not_native(el, "is_finite of a non-float array");
    return {elementwise(el, in, el.eqn.outputs[0].aval(),
                        [](OpBuilder& b, Location loc, ValueRange a) -> Value {
                          Value inf = fconst(b, loc, a[0], std::numeric_limits<double>::infinity());
                          Value abs = b.create<math::AbsFOp>(loc, a[0]);
                          return b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, abs, inf);
                        })};
  });
  t.add("select_n", [](EqnLowering& el, const std::vector<Value>& in) -> std::vector<Value> {
    const bool bool_pred = in_dtype(el) == DType::bool_;
    return {elementwise(
        el, in, el.eqn.outputs[0].aval(), [&](OpBuilder& b, Location loc, ValueRange a) -> Value {
          // a = (predicate, case 0, ..., case k-1, the output's scalar)
          const size_t k = a.size() - 2;
          if (bool_pred) return b.create<arith::SelectOp>(loc, a[0], a[2], a[1]);
          Value r = a[k];
          for (size_t i = k - 1; i-- > 0;) {
            Value idx = b.create<arith::ConstantOp>(
                loc, b.getIntegerAttr(a[0].getType(), static_cast<int64_t>(i)));
            Value is_i = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, a[0], idx);
            r = b.create<arith::SelectOp>(loc, is_i, a[1 + i], r);
          }
          return r;
        })};
  });
  t.add("clamp", typed_rule({[](OpBuilder& b, Location loc, ValueRange a) -> Value {
                               Value lo = b.create<arith::MaximumFOp>(loc, a[1], a[0]);
                               return b.create<arith::MinimumFOp>(loc, lo, a[2]);
                             },
                             [](OpBuilder& b, Location loc, ValueRange a) -> Value {
                               Value lo = b.create<arith::MaxSIOp>(loc, a[1], a[0]);
                               return b.create<arith::MinSIOp>(loc, lo, a[2]);
                             },
                             [](OpBuilder& b, Location loc, ValueRange a) -> Value {
                               Value lo = b.create<arith::MaxUIOp>(loc, a[1], a[0]);
                               return b.create<arith::MinUIOp>(loc, lo, a[2]);
                             },
                             {}}));
  t.add("convert_element_type",
        [](EqnLowering& el, const std::vector<Value>& in) -> std::vector<Value> {
          const DType from = in_dtype(el), to = el.eqn.outputs[0].aval().dtype;
          if (is_floating(from) && !is_floating(to) && to != DType::bool_)
            not_native(el, "float to integer conversion is not compiled natively");
          return {elementwise(el, in, el.eqn.outputs[0].aval(),
                              [&](OpBuilder& b, Location loc, ValueRange a) {
                                return convert(b, loc, a[0], from, to);
                              })};
        });
  for (const char* name :
       {"copy", "copy_p", "optimization_barrier", "name", "checkpoint_name", "stop_gradient"})
    t.add(name, identity_rule);
  t.add("device_put", [](EqnLowering& el, const std::vector<Value>& in) -> std::vector<Value> {
    if (el.state.memory_transfers && lax_params::device_put_memory_kind(el.eqn.params))
      return kernel_fallback(el, in, "a transfer between device and host memory");
    return in;
  });
  t.add("reduce_precision",
        [](EqnLowering& el, const std::vector<Value>& in) -> std::vector<Value> {
          const DType d = in_dtype(el);
          const int64_t e = el.eqn.params.get_int("exponent_bits");
          const int64_t m = el.eqn.params.get_int("mantissa_bits");
          const bool exact =
              (d == DType::f32 && e >= 8 && m >= 23) || (d == DType::f64 && e >= 11 && m >= 52);
          if (!exact)
            not_native(el, "rounding to a narrower float format is not compiled natively");
          return in;
        });
}

}  // namespace cjax::lower

// JAX's dtype promotion: the type promotion lattice with weak types (jax/_src/dtypes.py), in the
// default mode (`jax_numpy_dtype_promotion=standard`, x64 disabled, so a weak Python int is i32 and
// a weak Python float is f32). A weak type is the type of a Python scalar (here: a C++ number); it
// yields to the other operand's dtype: weak f32 + bf16 -> bf16, weak i32 + u8 -> u8.
//
//   bool -> int_ -> {u8, i8};  u8 -> {i16, u16};  u16 -> {i32, u32};  u32 -> {i32, u64};
//   i8 -> i16 -> i32 -> i64 -> float_;  u64 -> float_;  float_ -> {bf16, f16} -> f32 -> f64
//
// (int_ and float_ are the weak Python types.) So i32 + f32 -> f32, u8 + i32 -> i32,
// f16 + bf16 -> f32, i64 + u64 -> f32 (through the weak float, made strong).
#pragma once

#include <span>

#include "ir/dtype.h"
#include "ir/shaped_array.h"

namespace cjax {

struct DTypeAndWeak {
  DType dtype = DType::f32;
  bool weak = false;
  bool operator==(const DTypeAndWeak&) const = default;
};

inline DTypeAndWeak dtype_and_weak(const ShapedArray& a) {
  return {a.dtype, a.weak_type};
}

DType default_int_dtype();    // i32
DType default_uint_dtype();   // u32
DType default_float_dtype();  // f32

// The least upper bound of strong dtypes on the lattice (jnp.promote_types). Throws
// cjax::TypeError when there is none (an opaque dtype).
DType promote_types(DType a, DType b);

// jax.dtypes.lattice_result_type: the dtype and weak flag the operands of one op are promoted to.
DTypeAndWeak lattice_result_type(std::span<const DTypeAndWeak> args);
// jax.dtypes.result_type(..., return_weak_type_flag=True): as lattice_result_type, except that a
// weak result takes the default dtype of its kind (a weak bf16 result becomes a weak f32).
DTypeAndWeak result_type(std::span<const DTypeAndWeak> args);

// bool and integers -> f32 (64-bit integers -> f64); floats unchanged.
DType to_inexact_dtype(DType t);
// bool -> i32; others unchanged.
DType to_numeric_dtype(DType t);

}  // namespace cjax
